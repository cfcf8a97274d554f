#!/usr/bin/env bash
# On the GPU machine: conv3's softmax through softmax_to_lanes, shared with fc_softmax_warp (shared, the code of
# the commit that adds this folder), against ddb11e3 (head): the same arithmetic, its lane's probability picked
# from z[0] on rather than from the summed logit, checked for a change in time. build/exp/softmax.tar.xz, made
# here: suite-head, suite-shared, build/cuda/lib/, build/cuda/offload-runtime/ and unseen_batch.bin.
# The steps are results/ab/ab-pair.sh's (it held them in this file when it ran).
exec results/ab/ab-pair.sh build/exp/softmax.tar.xz head shared
