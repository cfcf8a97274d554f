// cudnn:fp32, the vendor yardstick: the network through cuDNN 9 and cuBLAS, layer by layer, NCHW, FP32
// math only (CUDNN_FMA_MATH: no tensor cores, so no TF32), the fastest algorithm cuDNN finds for each conv
// at the run's batch size. Only the uint8 -> float normalisation is our own kernel. Both libraries are
// called through cudnn_library.hpp's table, loaded once a GPU is there to use them.
#include <algorithm>
#include <array>

#include "common/kernels/cuda/cuda_device_session.hpp"
#include "common/kernels/cuda/cuda_kernels.cuh"
#include "backends/cudnn/cudnn_library.hpp"
#include "common/errors.hpp"
#include "common/registry.hpp"

namespace cnn {
namespace {
using cuda::check;

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw SuiteError(kExitOther, std::string("cublas: ") + what + " failed");
}

struct ConvStage {
  cudnnFilterDescriptor_t filter;
  cudnnConvolutionDescriptor_t conv;
  cudnnConvolutionFwdAlgo_t algo;
  cudnnTensorDescriptor_t bias;
  const float *w, *b;
};

class CudnnSession final : public cuda::DeviceSession {
 public:
  CudnnSession(const Network& net, const RunConfig& config)
      : DeviceSession("cudnn:fp32", config, 8192), api_(cudnn::process_api()) {
    check_dnn(api_.cudnnCreate(&dnn_), "cudnnCreate");
    check_blas(api_.cublasCreate(&blas_), "cublasCreate");
    check_blas(api_.cublasSetMathMode(blas_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");  // plain FP32
    check_dnn(api_.cudnnCreateActivationDescriptor(&relu_), "activation");
    check_dnn(api_.cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
              "relu");
    check_dnn(api_.cudnnCreatePoolingDescriptor(&pool_), "pooling");
    check_dnn(
        api_.cudnnSetPooling2dDescriptor(pool_, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2),
        "pool");
    const std::size_t largest = std::size_t(kConv1.filters) * kConv1.out_side() * kConv1.out_side();
    a_ = static_cast<float*>(alloc(batch_ * largest * sizeof(float)));
    b_ = static_cast<float*>(alloc(batch_ * largest * sizeof(float)));
    std::size_t workspace = 0;
    for (int l = 0; l < 3; ++l) {
      const ConvSpec& s = kConvs[l];
      ConvStage& st = stage_[l];
      check_dnn(api_.cudnnCreateFilterDescriptor(&st.filter), "filter");
      check_dnn(api_.cudnnSetFilter4dDescriptor(st.filter, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.filters,
                                                s.in_channels, s.kernel, s.kernel),
                "filter");
      check_dnn(api_.cudnnCreateConvolutionDescriptor(&st.conv), "convolution");
      check_dnn(api_.cudnnSetConvolution2dDescriptor(st.conv, s.pad, s.pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                     CUDNN_DATA_FLOAT),
                "convolution");
      check_dnn(api_.cudnnSetConvolutionMathType(st.conv, CUDNN_FMA_MATH), "math type");
      st.bias = tensor(1, s.filters, 1, 1);
      st.w = to_device(net.conv(l).weights);
      st.b = to_device(net.conv(l).bias);
      // The fastest FP32 algorithm at this batch size, found by running them (cuDNN's own benchmark).
      const auto x = tensor(int(batch_), s.in_channels, s.in_side, s.in_side);
      const auto y = tensor(int(batch_), s.filters, s.out_side(), s.out_side());
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int found = 0;
      check_dnn(api_.cudnnFindConvolutionForwardAlgorithmEx(dnn_, x, b_, st.filter, st.w, st.conv, y, a_,
                                                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf,
                                                             nullptr, 0),
                "find algorithm");
      const auto best = std::find_if(perf, perf + found, [](const auto& p) { return p.status == CUDNN_STATUS_SUCCESS; });
      if (best == perf + found) throw SuiteError(kExitOther, "cudnn: no FP32 algorithm for conv" + std::to_string(l + 1));
      st.algo = best->algo;
      algos_[l] = std::to_string(int(st.algo));
      std::size_t bytes = 0;
      check_dnn(api_.cudnnGetConvolutionForwardWorkspaceSize(dnn_, x, st.filter, st.conv, y, st.algo, &bytes),
                "workspace");
      workspace = std::max(workspace, bytes);
      api_.cudnnDestroyTensorDescriptor(x);
      api_.cudnnDestroyTensorDescriptor(y);
    }
    workspace_bytes_ = workspace;
    workspace_ = workspace ? alloc(workspace) : nullptr;
    fc_w_ = to_device(net.fc.weights);
    fc_bias_desc_ = tensor(1, kClasses, 1, 1);
    fc_b_ = to_device(net.fc.bias);
  }

  ~CudnnSession() override {
    for (auto& st : stage_) {
      api_.cudnnDestroyFilterDescriptor(st.filter);
      api_.cudnnDestroyConvolutionDescriptor(st.conv);
      api_.cudnnDestroyTensorDescriptor(st.bias);
    }
    api_.cudnnDestroyTensorDescriptor(fc_bias_desc_);
    api_.cudnnDestroyActivationDescriptor(relu_);
    api_.cudnnDestroyPoolingDescriptor(pool_);
    api_.cublasDestroy(blas_);
    api_.cudnnDestroy(dnn_);
  }

  std::vector<std::pair<std::string, std::string>> device_info() const override {
    auto info = cuda::device_info();
    info.emplace_back("cudnn_version", std::to_string(api_.cudnnGetVersion()));
    info.emplace_back("cudnn_conv_algorithms", algos_[0] + "," + algos_[1] + "," + algos_[2]);
    info.emplace_back("cudnn_math", "CUDNN_FMA_MATH (FP32, no TF32)");
    return info;
  }

 protected:
  bool layerwise() const override { return true; }

  void run(const std::uint8_t* images, float* probs, std::size_t count, cudaStream_t s,
           cuda::LayerEvents* ev) override {
    auto mark = [&](const char* layer) {
      if (ev) ev->mark(layer);
    };
    check_dnn(api_.cudnnSetStream(dnn_, s), "stream");
    check_blas(api_.cublasSetStream(blas_, s), "stream");
    const int n = int(count);
    const float one = 1.0f, zero = 0.0f;
    cuda::normalise_kernel<<<cuda::blocks_for(count * kImageBytes, 256), 256, 0, s>>>(images, b_, count * kImageBytes);
    float* in = b_;
    float* out = a_;
    for (int l = 0; l < 3; ++l) {
      const ConvSpec& c = kConvs[l];
      const ConvStage& st = stage_[l];
      const auto x = tensor(n, c.in_channels, c.in_side, c.in_side);
      const auto y = tensor(n, c.filters, c.out_side(), c.out_side());
      const auto p = tensor(n, c.filters, c.pooled_side(), c.pooled_side());
      check_dnn(api_.cudnnConvolutionForward(dnn_, &one, x, in, st.filter, st.w, st.conv, st.algo, workspace_,
                                             workspace_bytes_, &zero, y, out),
                "convolution");
      check_dnn(api_.cudnnAddTensor(dnn_, &one, st.bias, st.b, &one, y, out), "bias");
      mark(kLayers[3 * l].name.data());
      check_dnn(api_.cudnnActivationForward(dnn_, relu_, &one, y, out, &zero, y, out), "relu");
      mark(kLayers[3 * l + 1].name.data());
      check_dnn(api_.cudnnPoolingForward(dnn_, pool_, &one, y, out, &zero, p, in), "pool");
      mark(kLayers[3 * l + 2].name.data());
      for (auto d : {x, y, p}) api_.cudnnDestroyTensorDescriptor(d);
    }
    // FC: probs (n x 10, row-major) = pooled (n x 320) * W^T, as column-major: (10 x n) = W^T(10x320) X(320xn).
    const int inputs = kFc.inputs();
    check_blas(api_.cublasSgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, kClasses, n, inputs, &one, fc_w_, inputs, in,
                                inputs, &zero, probs, kClasses),
               "sgemm");
    const auto logits = tensor(n, kClasses, 1, 1);
    check_dnn(api_.cudnnAddTensor(dnn_, &one, fc_bias_desc_, fc_b_, &one, logits, probs), "fc bias");
    mark("fc");
    check_dnn(api_.cudnnSoftmaxForward(dnn_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, logits,
                                       probs, &zero, logits, probs),
              "softmax");
    mark("softmax");
    api_.cudnnDestroyTensorDescriptor(logits);
  }

 private:
  void check_dnn(cudnnStatus_t s, const char* what) const {
    if (s != CUDNN_STATUS_SUCCESS)
      throw SuiteError(kExitOther, std::string("cudnn: ") + what + ": " + api_.cudnnGetErrorString(s));
  }

  cudnnTensorDescriptor_t tensor(int n, int c, int h, int w) const {
    cudnnTensorDescriptor_t d;
    check_dnn(api_.cudnnCreateTensorDescriptor(&d), "tensor descriptor");
    check_dnn(api_.cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w),
              "tensor descriptor");
    return d;
  }

  const cudnn::Api& api_;
  cudnnHandle_t dnn_;
  cublasHandle_t blas_;
  cudnnActivationDescriptor_t relu_;
  cudnnPoolingDescriptor_t pool_;
  std::array<ConvStage, 3> stage_;
  std::array<std::string, 3> algos_;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  const float *fc_w_, *fc_b_;
  cudnnTensorDescriptor_t fc_bias_desc_;
  float *a_, *b_;
};

// The device first: without one there is no reason to map the libraries, and the reason shown is the
// device's, as for the cuda backend.
Availability availability() {
  Availability device = cuda::availability();
  if (!device.runnable) return device;
  const cudnn::Loaded& libraries = cudnn::process_libraries();
  if (!libraries.api) return {false, libraries.error, ""};
  return device;
}

const BackendRegistration kCudnn{"cudnn", availability};

const VariantRegistration kFp32{"cudnn", 1, open_session<CudnnSession>,
    {"fp32", "cuDNN 9 convolutions (fastest FP32 algorithm, no TF32), cuBLAS FC, layer by layer", true}};

}  // namespace
}  // namespace cnn
