// cuDNN and cuBLAS are opened when a GPU can use them, never linked (cudnn_library.hpp): the suite binary does
// not name them, and a library that cannot be loaded or lacks a function is a one-line reason, not a crash.
// tests/test_backends.cpp checks the results on a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <algorithm>

#include "backends/cudnn/cudnn_library.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {
namespace fs = std::filesystem;

bool is_cuda_library(const std::string& soname) {
  return soname.rfind("libcudnn", 0) == 0 || soname.rfind("libcublas", 0) == 0;
}

TEST(CudnnLibraries, SuiteBinaryDoesNotNeedThem) {
  const std::vector<std::string> needed = needed_libraries(SUITE_BINARY);
  ASSERT_NE(std::find(needed.begin(), needed.end(), "libc.so.6"), needed.end()) << "is the ELF reader right?";
  for (const std::string& soname : needed) EXPECT_FALSE(is_cuda_library(soname)) << soname;
}

// Where the dynamic loader found a library that it can load (libm: every machine has it).
fs::path loaded_path(const char* soname) {
  void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  link_map* map = nullptr;
  if (!handle || ::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0) throw std::runtime_error(::dlerror());
  return map->l_name;
}

TEST(CudnnLibraries, AMissingFileIsNamedWithTheLoadersReason) {
  TempDir dir;
  cudnn::Libraries libraries = cudnn::default_libraries();
  libraries.cudnn = {(dir / "libcudnn.so.9").string(), ""};
  const cudnn::Loaded loaded = cudnn::load(libraries);
  EXPECT_FALSE(loaded.api);
  EXPECT_EQ(loaded.error, "cannot load " + (dir / "libcudnn.so.9").string() +
                              ": cannot open shared object file: No such file or directory");
}

// A library found only in the build's folder is loaded from there; one that is not cuDNN is refused with
// every function it lacks.
TEST(CudnnLibraries, TheBuildFolderIsSearchedAndMissingFunctionsAreNamed) {
  TempDir dir;
  fs::create_symlink(loaded_path("libm.so.6"), dir / "libcudnn-impostor.so.9");
  cudnn::Libraries libraries = cudnn::default_libraries();
  libraries.cudnn = {"libcudnn-impostor.so.9", dir.path.string()};
  const cudnn::Loaded loaded = cudnn::load(libraries);
  if (!loaded.error.empty() && loaded.error.find("cannot load libcublas") == 0)
    GTEST_SKIP() << "cuBLAS does not load here: " << loaded.error;
  EXPECT_FALSE(loaded.api);
  EXPECT_EQ(loaded.error.rfind("cannot use libcudnn-impostor.so.9: it lacks cudnnGetVersion, ", 0), 0u)
      << loaded.error;
  EXPECT_NE(loaded.error.find(", cudnnSoftmaxForward"), std::string::npos) << loaded.error;
  EXPECT_EQ(loaded.error.find('\n'), std::string::npos) << loaded.error;
}

TEST(CudnnLibraries, TheInstalledOnesResolveEveryFunction) {
  const cudnn::Loaded& loaded = cudnn::process_libraries();
  if (!loaded.api) GTEST_SKIP() << "not loadable here: " << loaded.error;
  EXPECT_TRUE(loaded.error.empty()) << loaded.error;
  EXPECT_EQ(loaded.api->cudnnGetVersion() / 10000, std::size_t(CUDNN_MAJOR)) << "the headers' major version";
  EXPECT_STREQ(loaded.api->cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM), "CUDNN_STATUS_BAD_PARAM");
}

// A CPU run maps neither library; asked for explicitly under the same limit, the backend is not runnable
// here, one line and exit 4, whichever comes first: no GPU, a CUDA driver that cannot start in that
// address space, or libcublasLt's 500 MB that cannot be mapped.
TEST(CudnnLibraries, UnderAnAddressSpaceLimitTheBackendIsNotRunnable) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space";
#endif
  TempDir dir;
  const CliResult r = run_suite({"--backend", "cudnn", "--images", "100", "--output", (dir / "r.json").string()},
                                within_small_address_space());
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(r.err.rfind("suite: error: --backend 'cudnn': cannot run here: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(dir / "r.json"));
}

}  // namespace
}  // namespace cnn::test
