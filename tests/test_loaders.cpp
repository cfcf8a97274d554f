// The loaders turn files into the canonical form, or say in one line what is wrong and where.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "common/errors.hpp"
#include "common/network.hpp"
#include "suite/dataset.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {
namespace fs = std::filesystem;

std::string record(int label, std::uint8_t fill) {
  std::string r(kRecordBytes, char(fill));
  r[0] = char(label);
  return r;
}

// Expects an InputError whose message contains every fragment.
template <typename F>
void expect_input_error(F&& f, std::initializer_list<std::string> fragments) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    for (const auto& frag : fragments) EXPECT_NE(std::string(e.what()).find(frag), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
}

TEST(Cifar10, EmbeddedBatchHas4000LabelledImages) {
  const Dataset& d = training_images();
  ASSERT_EQ(d.size(), 4000u);
  EXPECT_EQ(d.pixels.size(), 4000u * kImageBytes);
  EXPECT_EQ(d.labels[0], 6);  // the first CIFAR-10 training image is a frog
  EXPECT_EQ(d.labels[1], 9);  // and the second a truck
  for (auto l : d.labels) ASSERT_LT(l, 10);
}

TEST(Cifar10, ReadsSeveralFilesAndFoldersInOrder) {
  TempDir dir;
  write_bytes(dir / "data_batch_2.bin", record(2, 20));
  write_bytes(dir / "data_batch_1.bin", record(1, 10) + record(3, 30));
  write_bytes(dir / "test_batch.bin", record(7, 70));  // not a training batch: ignored in a folder
  const Dataset d = load_cifar10({dir.path});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{1, 3, 2}));
  EXPECT_EQ(d.image(2)[0], 20);
  EXPECT_EQ(d.image(2)[kImageBytes - 1], 20);
  const Dataset two = load_cifar10({dir / "test_batch.bin", dir / "data_batch_2.bin"});
  EXPECT_EQ(two.labels, (std::vector<std::uint8_t>{7, 2}));
}

TEST(Cifar10, RejectsMissingEmptyTruncatedAndBadLabels) {
  TempDir dir;
  expect_input_error([&] { load_cifar10({dir / "nope.bin"}); }, {"nope.bin", "no such file"});
  write_bytes(dir / "empty.bin", "");
  expect_input_error([&] { load_cifar10({dir / "empty.bin"}); }, {"empty.bin", "empty"});
  write_bytes(dir / "short.bin", record(1, 1) + record(2, 2).substr(0, 100));
  expect_input_error([&] { load_cifar10({dir / "short.bin"}); }, {"short.bin", "3073"});
  write_bytes(dir / "label.bin", record(1, 1) + record(10, 2));
  expect_input_error([&] { load_cifar10({dir / "label.bin"}); }, {"label.bin", "record 1", "label 10"});
  fs::create_directory(dir / "empty_dir");
  expect_input_error([&] { load_cifar10({dir / "empty_dir"}); }, {"empty_dir", "no CIFAR-10 .bin files"});
  expect_input_error([&] { parse_cifar10(nullptr, 0, "mem", *std::make_unique<Dataset>()); }, {"mem", "empty"});
}

// A folder's batch files in the order of their numbers (leading zeros and all; names equal as numbers in their
// own order), its other .bin files only where there is no data_batch_* file, and nothing that is no .bin file.
TEST(Cifar10, AFolderIsReadInTheOrderOfItsNumbersAndOnlyItsBatchFiles) {
  TempDir dir;
  write_bytes(dir / "data_batch_10.bin", record(4, 40));
  write_bytes(dir / "data_batch_002.bin", record(2, 20));
  write_bytes(dir / "data_batch_1.bin", record(1, 10));
  write_bytes(dir / "data_batch_01.bin", record(0, 0));
  write_bytes(dir / "data_batch_5.bin.orig", record(5, 50));  // a copy put aside: not a .bin file
  write_bytes(dir / "old_data_batch_7.bin", record(7, 70));   // no data_batch_ file by its name
  fs::create_directory(dir / "data_batch_3.bin");              // a folder, whatever its name
  EXPECT_EQ(load_cifar10({dir.path}).labels, (std::vector<std::uint8_t>{0, 1, 2, 4}));

  TempDir other;  // no data_batch_* file: every .bin file, by name
  write_bytes(other / "b.bin", record(3, 30));
  write_bytes(other / "a.bin", record(6, 60));
  write_bytes(other / "notes.txt", "not a batch");
  EXPECT_EQ(load_cifar10({other.path}).labels, (std::vector<std::uint8_t>{6, 3}));
}

TEST(Cifar10, ReadingStopsAtTheImagesWanted) {
  TempDir dir;
  write_bytes(dir / "one.bin", record(1, 10) + record(2, 20));
  write_bytes(dir / "short.bin", record(3, 30).substr(0, 100));  // never reached: 2 images were wanted
  const Dataset d = load_cifar10({dir / "one.bin", dir / "short.bin"}, 2);
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{1, 2}));
  expect_input_error([&] { load_cifar10({dir / "one.bin", dir / "short.bin"}, 3); }, {"short.bin", "3073"});
}

TEST(Cifar10, ADeviceIsNoBatchFile) {
  expect_input_error([] { load_cifar10({"/dev/null"}); }, {"/dev/null", "not a regular file"});
}

// A record with a bad label leaves the data set as it was before the file.
TEST(Cifar10, ABadFileAddsNothingToTheDataSet) {
  Dataset d;
  const std::string good = record(1, 10), bad = record(2, 20) + record(12, 30);
  parse_cifar10(reinterpret_cast<const std::uint8_t*>(good.data()), good.size(), "good", d);
  expect_input_error([&] { parse_cifar10(reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size(), "bad", d); },
                     {"bad", "record 1", "label 12"});
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{1}));
  EXPECT_EQ(d.pixels.size(), kImageBytes);
  EXPECT_EQ(d.sources, (std::vector<std::string>{"good"}));
}

TEST(Cifar10, CyclesBeyondTheDataSet) {
  const Dataset& d = training_images();
  const auto px = cycled_pixels(d, 4003);
  ASSERT_EQ(px.size(), 4003u * kImageBytes);
  EXPECT_TRUE(std::equal(px.begin() + 4000 * kImageBytes, px.end(), d.pixels.begin()));
}

// ---- weights

const fs::path& weights_dir() {
  static const fs::path p = data_dir() / "convnetjs-cifar10";
  return p;
}

TEST(Weights, CanonicalOrderMatchesTheFileOrder) {
  const Network& net = trained_network();
  const auto raw = parse_numbers(read_text_file(weights_dir() / "layer1_conv.txt"), "layer1");
  // File: header(4), then filter, kernel-x, kernel-y, channel. Value 1 of filter 0 is kx=0, ky=0, c=1;
  // value 3 is kx=0, ky=1, c=0; value 15 is kx=1, ky=0, c=0.
  EXPECT_EQ(net.conv1.weights64[((0 * 3 + 1) * 5 + 0) * 5 + 0], raw[4 + 1]);
  EXPECT_EQ(net.conv1.weights64[((0 * 3 + 0) * 5 + 1) * 5 + 0], raw[4 + 3]);
  EXPECT_EQ(net.conv1.weights64[((0 * 3 + 0) * 5 + 0) * 5 + 1], raw[4 + 15]);
  EXPECT_EQ(net.conv1.bias64.size(), 16u);
  EXPECT_EQ(net.conv1.bias64[15], raw.back());
  // FC file: output, y, x, channel. Value 1 is y=0, x=0, c=1; value 20 is y=0, x=1, c=0.
  const auto fc = parse_numbers(read_text_file(weights_dir() / "layer10_fc.txt"), "fc");
  EXPECT_EQ(net.fc.weights64[(1 * 4 + 0) * 4 + 0], fc[2 + 1]);
  EXPECT_EQ(net.fc.weights64[(0 * 4 + 0) * 4 + 1], fc[2 + 20]);
  EXPECT_EQ(net.fc.weights64[320 + 0], fc[2 + 320]);
  EXPECT_EQ(net.conv2.weights.size(), kConv2.weight_count());
  EXPECT_EQ(net.conv3.bias.size(), 20u);
}

std::string conv1_text() { return read_text_file(weights_dir() / "layer1_conv.txt"); }

TEST(Weights, RejectsWrongHeaderCountAndNonNumbers) {
  const std::string good = conv1_text();
  EXPECT_NO_THROW(parse_conv_weights(good, kConv1, "c1"));
  expect_input_error([&] { parse_conv_weights("5 5 3 17\n" + good.substr(good.find('\n') + 1), kConv1, "c1"); },
                     {"c1", "header", "does not match"});
  expect_input_error([&] { parse_conv_weights(good, kConv2, "c1"); }, {"header"});
  expect_input_error([&] { parse_conv_weights(good + "0.5\n", kConv1, "c1"); }, {"expected 1216 values", "1217"});
  expect_input_error([&] { parse_conv_weights(good.substr(0, good.rfind('\n', good.size() - 2)), kConv1, "c1"); },
                     {"expected 1216 values", "1215"});
  expect_input_error([&] { parse_conv_weights("", kConv1, "c1"); }, {"empty"});
  expect_input_error([&] { parse_conv_weights("5 5", kConv1, "c1"); }, {"header is incomplete"});
  expect_input_error([&] { parse_conv_weights("5 5 3 16.5\n", kConv1, "c1"); }, {"not a positive integer"});
  // Each header field on its own: any one that differs from the network is refused.
  const std::string body = good.substr(good.find('\n') + 1);
  for (const char* header : {"3 5 3 16", "5 3 3 16", "5 5 1 16"})
    expect_input_error([&] { parse_conv_weights(header + std::string("\n") + body, kConv1, "c1"); },
                       {"c1", std::string("header '") + header + "' does not match the network (5 5 3 16)"});
  // 0, and a count beyond int, are no positive integers (the cast of 1e20 to int is undefined).
  for (const char* header : {"0 5 3 16", "5 5 3 1e20", "5 -5 3 16"})
    expect_input_error([&] { parse_conv_weights(header + std::string("\n") + body, kConv1, "c1"); },
                       {"c1", "is not a positive integer"});
  std::string nan = good;  // the first weight becomes "nan"
  const auto first = nan.find('\n') + 1;
  nan.replace(first, nan.find('\n', first) - first, "nan");
  expect_input_error([&] { parse_conv_weights(nan, kConv1, "c1"); }, {"value 5", "not finite"});
  expect_input_error([&] { parse_numbers("1 2 inf", "x"); }, {"value 3", "not finite"});
  expect_input_error([&] { parse_numbers("1 -Infinity", "x"); }, {"not finite"});
  expect_input_error([&] { parse_numbers("1 1e999", "x"); }, {"not finite"});
  expect_input_error([&] { parse_numbers("1 0.5abc", "x"); }, {"value 2", "'0.5abc' is not a number"});
  expect_input_error([&] { parse_numbers("1,2", "x"); }, {"not a number"});
  // An editor's UTF-8 byte-order mark read as part of the first value: "value 1 '5' is not a number".
  EXPECT_NO_THROW(parse_conv_weights("\xEF\xBB\xBF" + good, kConv1, "c1"));
  expect_input_error([&] { parse_numbers("1 \xEF\xBB\xBF" "2", "x"); }, {"value 2", "is not a number"});
}

TEST(Weights, FcHeaderAndCount) {
  const std::string good = read_text_file(weights_dir() / "layer10_fc.txt");
  EXPECT_NO_THROW(parse_fc_weights(good, kFc, "fc"));
  expect_input_error([&] { parse_fc_weights("321 10" + good.substr(good.find('\n')), kFc, "fc"); },
                     {"fc", "header '321 10'"});
  expect_input_error([&] { parse_fc_weights(good + " 1", kFc, "fc"); }, {"expected 3210 values"});
}

TEST(Weights, FolderErrorsNameTheFile) {
  TempDir dir;
  expect_input_error([&] { load_network(dir / "missing"); }, {"missing", "weight folder not found"});
  expect_input_error([&] { load_network(dir.path); }, {"layer1_conv.txt", "no such file"});
  fs::create_directory(dir / "layer1_conv.txt");
  expect_input_error([&] { load_network(dir.path); }, {"layer1_conv.txt", "not a regular file"});
}

}  // namespace
}  // namespace cnn::test
