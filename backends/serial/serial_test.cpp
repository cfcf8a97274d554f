// The serial backend's own behaviour, beyond the every-variant test (tests/test_backends.cpp).
#include <gtest/gtest.h>

#include "tests/test_support.hpp"

namespace cnn::test {
namespace {

// A variant that ignores --batch reports what ran: winograd's kernel takes four images at a time.
TEST(Serial, WinogradReportsTheFourImagesItRanPerPass) {
  TempDir dir;
  const CliResult r = run_suite({"--backend", "serial:winograd", "--images", "40", "--batch", "8", "--repeat", "1",
                                 "--warmup", "0", "--quiet", "--output", (dir / "r.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(dir / "r.json")["runs"][0]["batch"], 4) << "resolved --batch 8 but ran four images per pass";
}

}  // namespace
}  // namespace cnn::test
