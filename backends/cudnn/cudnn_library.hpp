// cuDNN and cuBLAS, opened with dlopen the first time a GPU can use them rather than linked: the suite
// binary names neither, so a CPU run maps none of their hundreds of megabytes (libcublasLt alone maps over
// 500 MB) and runs under an address-space limit (`ulimit -v`) or on a machine without them.
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include <optional>
#include <string>

namespace cnn::cudnn {

// Every cuDNN and cuBLAS function the backend calls, typed from the headers' own declarations, so that a
// call through the table is checked like a call of the function. cublas_v2.h #defines cublasCreate as
// cublasCreate_v2 (likewise Destroy, SetStream, Sgemm); the members and the symbols are those _v2 names.
struct Api {
  decltype(&::cudnnGetVersion) cudnnGetVersion;
  decltype(&::cudnnGetErrorString) cudnnGetErrorString;
  decltype(&::cudnnCreate) cudnnCreate;
  decltype(&::cudnnDestroy) cudnnDestroy;
  decltype(&::cudnnSetStream) cudnnSetStream;
  decltype(&::cudnnCreateTensorDescriptor) cudnnCreateTensorDescriptor;
  decltype(&::cudnnSetTensor4dDescriptor) cudnnSetTensor4dDescriptor;
  decltype(&::cudnnDestroyTensorDescriptor) cudnnDestroyTensorDescriptor;
  decltype(&::cudnnCreateFilterDescriptor) cudnnCreateFilterDescriptor;
  decltype(&::cudnnSetFilter4dDescriptor) cudnnSetFilter4dDescriptor;
  decltype(&::cudnnDestroyFilterDescriptor) cudnnDestroyFilterDescriptor;
  decltype(&::cudnnCreateConvolutionDescriptor) cudnnCreateConvolutionDescriptor;
  decltype(&::cudnnSetConvolution2dDescriptor) cudnnSetConvolution2dDescriptor;
  decltype(&::cudnnSetConvolutionMathType) cudnnSetConvolutionMathType;
  decltype(&::cudnnDestroyConvolutionDescriptor) cudnnDestroyConvolutionDescriptor;
  decltype(&::cudnnCreateActivationDescriptor) cudnnCreateActivationDescriptor;
  decltype(&::cudnnSetActivationDescriptor) cudnnSetActivationDescriptor;
  decltype(&::cudnnDestroyActivationDescriptor) cudnnDestroyActivationDescriptor;
  decltype(&::cudnnCreatePoolingDescriptor) cudnnCreatePoolingDescriptor;
  decltype(&::cudnnSetPooling2dDescriptor) cudnnSetPooling2dDescriptor;
  decltype(&::cudnnDestroyPoolingDescriptor) cudnnDestroyPoolingDescriptor;
  decltype(&::cudnnFindConvolutionForwardAlgorithmEx) cudnnFindConvolutionForwardAlgorithmEx;
  decltype(&::cudnnGetConvolutionForwardWorkspaceSize) cudnnGetConvolutionForwardWorkspaceSize;
  decltype(&::cudnnConvolutionForward) cudnnConvolutionForward;
  decltype(&::cudnnAddTensor) cudnnAddTensor;
  decltype(&::cudnnActivationForward) cudnnActivationForward;
  decltype(&::cudnnPoolingForward) cudnnPoolingForward;
  decltype(&::cudnnSoftmaxForward) cudnnSoftmaxForward;

  decltype(&::cublasCreate) cublasCreate;
  decltype(&::cublasDestroy) cublasDestroy;
  decltype(&::cublasSetStream) cublasSetStream;
  decltype(&::cublasSetMathMode) cublasSetMathMode;
  decltype(&::cublasSgemm) cublasSgemm;
};

// One library: `name` is tried as dlopen searches for it (LD_LIBRARY_PATH, the binary's RUNPATH, the ld.so
// cache), then as `build_dir`/`name`, the folder the build found it in (where the RUNPATH pointed while
// the suite linked it), for toolkits the loader's cache does not know.
struct LibraryFile {
  std::string name;
  std::string build_dir;  // empty: none
};
struct Libraries {
  LibraryFile cudnn, cublas;
};
// libcudnn.so.<CUDNN_MAJOR> and libcublas.so.<CUBLAS_VER_MAJOR>: the major versions of the headers built against.
Libraries default_libraries();

struct Loaded {
  std::optional<Api> api;  // every function resolved; empty on failure
  std::string error;       // why not, one line: "cannot load libcudnn.so.9: ..." or the functions missing
};
// Opens both libraries (RTLD_NOW | RTLD_LOCAL) and resolves every member of Api. A success stays loaded for
// the life of the process; a failure leaves nothing loaded.
Loaded load(const Libraries& libraries);

// The process's default_libraries(), loaded on the first call (thread-safe), the same answer afterwards.
const Loaded& process_libraries();
// process_libraries()'s functions, or an UnavailableError (exit 4) with its error.
const Api& process_api();

}  // namespace cnn::cudnn
