#include "backends/cudnn/cudnn_library.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <vector>

#include "common/errors.hpp"

namespace cnn::cudnn {
namespace {

// dlerror() names the file it tried; the message names it once, before the colon.
std::string load_error(const std::string& tried) {
  const char* raw = ::dlerror();
  std::string why = raw ? raw : "unknown dlopen error";
  if (why.rfind(tried + ": ", 0) == 0) why.erase(0, tried.size() + 2);
  return "cannot load " + tried + ": " + why;
}

// The handle, or nullptr with `error` set. When only the build's folder has the file, its error is the one
// that explains (a segment that could not be mapped), not the search's "cannot open".
void* open_library(const LibraryFile& file, std::string& error) {
  if (void* handle = ::dlopen(file.name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  error = load_error(file.name);
  if (file.build_dir.empty() || file.name.find('/') != std::string::npos) return nullptr;
  const std::string path = file.build_dir + "/" + file.name;
  if (::access(path.c_str(), F_OK) != 0) return nullptr;
  if (void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  error = load_error(path);
  return nullptr;
}

// Fills one member of Api from a library, remembering the symbols it lacks.
class Binder {
 public:
  explicit Binder(void* library) : library_(library) {}
  template <typename Function>
  void operator()(Function& member, const char* symbol) {
    // POSIX guarantees that dlsym's object pointer converts to the function pointer it stands for.
    member = reinterpret_cast<Function>(::dlsym(library_, symbol));
    if (!member) missing_ += (missing_.empty() ? "" : ", ") + std::string(symbol);
  }
  const std::string& missing() const { return missing_; }

 private:
  void* library_;
  std::string missing_;
};

// Every member of Api from its library: cuDNN's functions by their names, cuBLAS's by the _v2 entry points
// that cublas_v2.h maps the plain names to.
void bind_api(Binder& dnn, Binder& blas, Api& api) {
  dnn(api.cudnnGetVersion, "cudnnGetVersion");
  dnn(api.cudnnGetErrorString, "cudnnGetErrorString");
  dnn(api.cudnnCreate, "cudnnCreate");
  dnn(api.cudnnDestroy, "cudnnDestroy");
  dnn(api.cudnnSetStream, "cudnnSetStream");
  dnn(api.cudnnCreateTensorDescriptor, "cudnnCreateTensorDescriptor");
  dnn(api.cudnnSetTensor4dDescriptor, "cudnnSetTensor4dDescriptor");
  dnn(api.cudnnDestroyTensorDescriptor, "cudnnDestroyTensorDescriptor");
  dnn(api.cudnnCreateFilterDescriptor, "cudnnCreateFilterDescriptor");
  dnn(api.cudnnSetFilter4dDescriptor, "cudnnSetFilter4dDescriptor");
  dnn(api.cudnnDestroyFilterDescriptor, "cudnnDestroyFilterDescriptor");
  dnn(api.cudnnCreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor");
  dnn(api.cudnnSetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor");
  dnn(api.cudnnSetConvolutionMathType, "cudnnSetConvolutionMathType");
  dnn(api.cudnnDestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor");
  dnn(api.cudnnCreateActivationDescriptor, "cudnnCreateActivationDescriptor");
  dnn(api.cudnnSetActivationDescriptor, "cudnnSetActivationDescriptor");
  dnn(api.cudnnDestroyActivationDescriptor, "cudnnDestroyActivationDescriptor");
  dnn(api.cudnnCreatePoolingDescriptor, "cudnnCreatePoolingDescriptor");
  dnn(api.cudnnSetPooling2dDescriptor, "cudnnSetPooling2dDescriptor");
  dnn(api.cudnnDestroyPoolingDescriptor, "cudnnDestroyPoolingDescriptor");
  dnn(api.cudnnFindConvolutionForwardAlgorithmEx, "cudnnFindConvolutionForwardAlgorithmEx");
  dnn(api.cudnnGetConvolutionForwardWorkspaceSize, "cudnnGetConvolutionForwardWorkspaceSize");
  dnn(api.cudnnConvolutionForward, "cudnnConvolutionForward");
  dnn(api.cudnnAddTensor, "cudnnAddTensor");
  dnn(api.cudnnActivationForward, "cudnnActivationForward");
  dnn(api.cudnnPoolingForward, "cudnnPoolingForward");
  dnn(api.cudnnSoftmaxForward, "cudnnSoftmaxForward");
  blas(api.cublasCreate, "cublasCreate_v2");
  blas(api.cublasDestroy, "cublasDestroy_v2");
  blas(api.cublasSetStream, "cublasSetStream_v2");
  blas(api.cublasSetMathMode, "cublasSetMathMode");
  blas(api.cublasSgemm, "cublasSgemm_v2");
}

}  // namespace

Libraries default_libraries() {
  return {{"libcudnn.so." + std::to_string(CUDNN_MAJOR), SUITE_CUDNN_LIBRARY_DIR},
          {"libcublas.so." + std::to_string(CUBLAS_VER_MAJOR), SUITE_CUBLAS_LIBRARY_DIR}};
}

Loaded load(const Libraries& libraries) {
  Loaded out;
  void* cudnn = open_library(libraries.cudnn, out.error);
  void* cublas = cudnn ? open_library(libraries.cublas, out.error) : nullptr;
  if (cublas) {
    Api api{};
    Binder dnn(cudnn), blas(cublas);
    bind_api(dnn, blas, api);
    if (!dnn.missing().empty()) out.error = "cannot use " + libraries.cudnn.name + ": it lacks " + dnn.missing();
    else if (!blas.missing().empty()) out.error = "cannot use " + libraries.cublas.name + ": it lacks " + blas.missing();
    else out.api = api;
  }
  if (out.api) return out;
  if (cublas) ::dlclose(cublas);
  if (cudnn) ::dlclose(cudnn);
  return out;
}

const Loaded& process_libraries() {
  static const Loaded loaded = load(default_libraries());
  return loaded;
}

const Api& process_api() {
  const Loaded& loaded = process_libraries();
  if (!loaded.api) throw UnavailableError("cudnn: " + loaded.error);
  return *loaded.api;
}

}  // namespace cnn::cudnn
