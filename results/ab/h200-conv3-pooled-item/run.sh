#!/usr/bin/env bash
# On the GPU machine: the Winograd kernels' output stage with one pooled_item for the stores and the FC (dedup,
# the code of the commit that adds this folder) against the measured build of results/ab/h200-conv3-fused-fc/
# (fused): the same arithmetic in another order, checked for a change in time. build/exp/dedup.tar.xz, made
# here: suite-fused, suite-dedup, build/cuda/lib/, build/cuda/offload-runtime/ and unseen_batch.bin.
# The steps are results/ab/ab-pair.sh's (it held them in this file when it ran).
exec results/ab/ab-pair.sh build/exp/dedup.tar.xz fused dedup
