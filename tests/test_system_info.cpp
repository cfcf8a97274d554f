// The machine facts a report records (suite/system_info.hpp) and the energy counters (suite/energy.hpp: RAPL,
// NVML), read from texts, folders and a stand-in NVML library that the tests give them: this machine's own files
// say only what this machine has.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "suite/energy.hpp"
#include "suite/system_info.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {
namespace fs = std::filesystem;

// What `parse` makes of `text`.
template <class Parse>
auto parsed(Parse parse, const std::string& text) {
  std::istringstream in(text);
  return parse(in);
}
std::string cpu_model_of(const std::string& text) { return parsed(cpu_model_in, text); }
std::string boot_id_of(const std::string& text) { return parsed(boot_id_in, text); }
std::optional<std::size_t> peak_of(const std::string& text) { return parsed(peak_bytes_in, text); }
std::optional<int> running_of(const std::string& text) { return parsed(procs_running_in, text); }

TEST(SystemInfo, CpuModelIsTheFirstModelNameWithAValue) {
  EXPECT_EQ(cpu_model_of("processor\t: 0\nmodel name\t: AMD EPYC 9B14\nmodel name\t: other\n"), "AMD EPYC 9B14");
  EXPECT_EQ(cpu_model_of("model name\t:   Intel(R) Xeon(R)  \t \n"), "Intel(R) Xeon(R)");
  // An empty value (it threw std::out_of_range), or a line without a colon, is passed over.
  EXPECT_EQ(cpu_model_of("model name\t:\nmodel name\t: \t\nmodel name x\nmodel name\t: Later\n"), "Later");
  EXPECT_EQ(cpu_model_of("model name\t:"), "unknown");
  EXPECT_EQ(cpu_model_of("processor\t: 0\nCPU part\t: 0xd40\n"), "unknown");  // an Arm machine's
  EXPECT_EQ(cpu_model_of(" model name\t: indented\n"), "unknown");
  EXPECT_EQ(cpu_model_of(""), "unknown");
}

TEST(SystemInfo, BootIdIsALowerCaseUuidOrNothing) {
  EXPECT_EQ(boot_id_of("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n"), "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  EXPECT_EQ(boot_id_of("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0\n"), "");
  EXPECT_EQ(boot_id_of("<script>alert(1)</script>\n"), "");
  EXPECT_EQ(boot_id_of("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg\n"), "");
  EXPECT_EQ(boot_id_of(std::string(64, 'a')), std::string(64, 'a'));
  EXPECT_EQ(boot_id_of(std::string(65, 'a')), "");
  EXPECT_EQ(boot_id_of(""), "");
  EXPECT_EQ(boot_id_of("\nabc\n"), "");  // the first line only
}

TEST(SystemInfo, PeakMemoryIsVmHwmInBytes) {
  EXPECT_EQ(peak_of("Name:\tsuite\nVmPeak:\t  9999 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 1000 kB\n"), 1234u * 1024);
  EXPECT_EQ(peak_of("VmHWM:\t0 kB\n"), 0u);
  EXPECT_EQ(peak_of("Name:\tVmHWM: 1 kB\nVmHWM:\t8 kB\n"), 8192u);  // a process may name itself so
  // Anything else is no reading (std::stoull threw on the first two), and the caller falls back to getrusage.
  EXPECT_EQ(peak_of("VmHWM:\tlots kB\n"), std::nullopt);
  EXPECT_EQ(peak_of("VmHWM:\t99999999999999999999999 kB\n"), std::nullopt);
  EXPECT_EQ(peak_of("VmHWM:\t18014398509481984 kB\n"), std::nullopt);  // 2^54 KiB: past size_t in bytes
  EXPECT_EQ(peak_of("VmHWM:\t12 MB\n"), std::nullopt);
  EXPECT_EQ(peak_of("VmRSS:\t12 kB\n"), std::nullopt);
  EXPECT_GT(peak_host_memory_bytes(), 0u);
}

TEST(SystemInfo, RunnableProcessesComeFromProcsRunning) {
  // /proc/stat's interrupt line runs to thousands of numbers; a key is only a line's first word.
  const std::string stat = "cpu  1 2 3\nintr 5 procs_running 98" + std::string(2 << 20, ' ') +
                           "procs_running 99\nctxt 42\nprocs_running 3\nprocs_blocked 0\n";
  EXPECT_EQ(running_of(stat), 3);
  EXPECT_EQ(running_of("procs_running x\nprocs_running 2\n"), std::nullopt);
  EXPECT_EQ(running_of("cpu 1 2\nprocs_blocked 1\n"), std::nullopt);
  const MachineLoad load = machine_load();
  EXPECT_GE(load.other_runnable, 0);
  EXPECT_GE(load.load_avg_1min, 0.0);
}

// A powercap folder with the given packages: {energy_uj's text, max_energy_range_uj's text or "" for none}.
void write_powercap(const fs::path& root, const std::vector<std::pair<std::string, std::string>>& packages) {
  for (std::size_t i = 0; i < packages.size(); ++i) {
    const fs::path dir = root / ("intel-rapl:" + std::to_string(i));
    fs::create_directories(dir);
    write_bytes(dir / "energy_uj", packages[i].first);
    if (!packages[i].second.empty()) write_bytes(dir / "max_energy_range_uj", packages[i].second);
  }
}

void set_energy(const fs::path& root, int package, const std::string& uj) {
  write_bytes(root / ("intel-rapl:" + std::to_string(package)) / "energy_uj", uj);
}

TEST(Energy, RaplSumsThePackagesFromTheFirstReading) {
  TempDir dir;
  write_powercap(dir.path, {{"5000000\n", "100000000\n"}, {"1000000\n", "100000000\n"}});
  fs::create_directories(dir / "intel-rapl:3");  // after a gap: not a package of this machine
  write_bytes(dir / "intel-rapl:3" / "energy_uj", "7000000000\n");
  const EnergyCounter rapl = EnergyCounter::cpu(dir.path.string());
  ASSERT_TRUE(rapl.available()) << rapl.why_not();
  EXPECT_EQ(rapl.source(), "rapl");
  EXPECT_EQ(rapl.joules(), 0.0);
  write_bytes(dir / "intel-rapl:3" / "energy_uj", "9000000000\n");
  set_energy(dir.path, 0, "7500000\n");
  set_energy(dir.path, 1, "1250000\n");
  EXPECT_EQ(rapl.joules(), 2.75);
  EXPECT_EQ(rapl.joules(), 2.75);
}

// RAPL's counter wraps at max_energy_range_uj (65 kJ on the EPYCs: ten minutes at 100 W): a 1 s window across
// the wrap read "the counter did not move" and lost the run's energy.
TEST(Energy, RaplCountsAWrapBetweenTwoReadings) {
  TempDir dir;
  write_powercap(dir.path, {{"999000000\n", "1000000000\n"}, {"10\n", ""}});
  const EnergyCounter rapl = EnergyCounter::cpu(dir.path.string());
  ASSERT_TRUE(rapl.available()) << rapl.why_not();
  const EnergyCounter copy = rapl;  // shares the readings
  set_energy(dir.path, 0, "500000\n");
  EXPECT_EQ(copy.joules(), 1.5);
  set_energy(dir.path, 0, "2500000\n");
  EXPECT_EQ(rapl.joules(), 3.5);
  // The other package has no range: a wrap there has no size, so no reading, and the next one goes on from it.
  set_energy(dir.path, 1, "5\n");
  EXPECT_EQ(rapl.joules(), std::nullopt);
  set_energy(dir.path, 0, "3500000\n");
  EXPECT_EQ(rapl.joules(), std::nullopt);
  set_energy(dir.path, 1, "1000010\n");
  EXPECT_EQ(rapl.joules(), 5.5);  // + 1 J on each package since the last reading
  // A range no larger than the last reading is no range either.
  TempDir other;
  write_powercap(other.path, {{"100\n", "100\n"}});
  const EnergyCounter small = EnergyCounter::cpu(other.path.string());
  set_energy(other.path, 0, "50\n");
  EXPECT_EQ(small.joules(), std::nullopt);
}

TEST(Energy, RaplThatCannotBeReadSaysWhy) {
  TempDir dir;
  const EnergyCounter none = EnergyCounter::cpu((dir / "absent").string());
  EXPECT_FALSE(none.available());
  EXPECT_EQ(none.why_not(), "RAPL not readable (no " + (dir / "absent").string() + "/intel-rapl:0/energy_uj)");
  EXPECT_EQ(none.joules(), std::nullopt);
  write_powercap(dir.path, {{"12\n", ""}, {"-3\n", ""}});
  const fs::path second = dir / "intel-rapl:1" / "energy_uj";
  const EnergyCounter negative = EnergyCounter::cpu(dir.path.string());
  EXPECT_EQ(negative.why_not(), "RAPL not readable (" + second.string() + ": not a count)");
  EXPECT_EQ(negative.joules(), std::nullopt);
  set_energy(dir.path, 1, "nan\n");
  EXPECT_EQ(EnergyCounter::cpu(dir.path.string()).why_not(), negative.why_not());
  set_energy(dir.path, 1, "40\n");
  EXPECT_TRUE(EnergyCounter::cpu(dir.path.string()).available());
  // Kernels since late 2020 let only root read energy_uj.
  fs::permissions(second, fs::perms::none);
  const EnergyCounter hidden = EnergyCounter::cpu(dir.path.string());
  if (::geteuid() == 0) {
    EXPECT_TRUE(hidden.available()) << hidden.why_not();
  } else {
    EXPECT_EQ(hidden.why_not(), "RAPL not readable (" + second.string() + ": permission denied)");
  }
  // A reading that fails later is no reading (not a wrap), and the counter goes on once it can be read again.
  fs::permissions(second, fs::perms::owner_read | fs::perms::owner_write);
  write_bytes(dir / "intel-rapl:1" / "max_energy_range_uj", "1000000000000\n");
  const EnergyCounter later = EnergyCounter::cpu(dir.path.string());
  ASSERT_TRUE(later.available());
  set_energy(dir.path, 1, "garbage\n");
  EXPECT_EQ(later.joules(), std::nullopt);
  set_energy(dir.path, 1, "1000040\n");
  EXPECT_EQ(later.joules(), 1.0);
}

// NVML through tests/fake_nvml (two GPUs unless FAKE_NVML_GPUS says otherwise; GPU i on bus 0000:0i:00.0
// uses i + 1 J between readings). CUDA_VISIBLE_DEVICES=1 made CUDA's device 0 NVML's GPU 1, and the run read
// GPU 0's counter: the GPU is now found by the PCI bus id the session reports.
TEST(Energy, NvmlReadsTheGpuOnTheRunsPciBus) {
  WithoutEnvironment clean({"FAKE_NVML_GPUS", "FAKE_NVML_FAIL"});
  const auto joules_between_readings = [](const EnergyCounter& nvml) {
    const auto a = nvml.joules(), b = nvml.joules();
    return a && b ? std::optional<double>(*b - *a) : std::nullopt;
  };
  for (const int gpu : {0, 1}) {
    const EnergyCounter nvml = EnergyCounter::gpu("0000:0" + std::to_string(gpu) + ":00.0", FAKE_NVML);
    ASSERT_TRUE(nvml.available()) << nvml.why_not();
    EXPECT_EQ(nvml.source(), "nvml");
    EXPECT_EQ(joules_between_readings(nvml), gpu + 1.0);
  }
  EXPECT_EQ(EnergyCounter::gpu("0000:02:00.0", FAKE_NVML).why_not(),
            "NVML does not know the run's GPU (PCI bus 0000:02:00.0)");
  // Without a bus id: NVML's GPU only where it has one.
  EXPECT_EQ(EnergyCounter::gpu("", FAKE_NVML).why_not(),
            "the run's GPU has no PCI bus id to find it among NVML's 2 GPUs");
  ::setenv("FAKE_NVML_GPUS", "1", 1);
  const EnergyCounter only = EnergyCounter::gpu("", FAKE_NVML);
  ASSERT_TRUE(only.available()) << only.why_not();
  EXPECT_EQ(joules_between_readings(only), 1.0);
}

TEST(Energy, NvmlThatCannotCountSaysWhy) {
  WithoutEnvironment clean({"FAKE_NVML_GPUS", "FAKE_NVML_FAIL"});
  const std::string bus = "0000:01:00.0";
  EXPECT_EQ(EnergyCounter::gpu(bus, "/nonexistent/libnvidia-ml.so.1").why_not(),
            "NVML not found (/nonexistent/libnvidia-ml.so.1)");
  EXPECT_EQ(EnergyCounter::gpu(bus, FAKE_NVML_NO_ENERGY).why_not(), "NVML lacks the total-energy counter");
  const std::pair<const char*, std::string> failures[] = {
      {"init", "NVML could not be initialised"},
      {"count", "NVML could not be initialised"},
      {"energy", "the run's GPU has no total-energy counter (NVML: not supported)"},
  };
  for (const auto& [entry, why] : failures) {
    ::setenv("FAKE_NVML_FAIL", entry, 1);
    const EnergyCounter nvml = EnergyCounter::gpu(bus, FAKE_NVML);
    EXPECT_EQ(nvml.why_not(), why) << entry;
    EXPECT_FALSE(nvml.available());
    EXPECT_EQ(nvml.joules(), std::nullopt);
  }
  ::setenv("FAKE_NVML_GPUS", "1", 1);
  ::setenv("FAKE_NVML_FAIL", "index", 1);
  EXPECT_EQ(EnergyCounter::gpu("", FAKE_NVML).why_not(), "NVML could not open its GPU");
  // A counter that stops answering after the start gives no reading.
  ::unsetenv("FAKE_NVML_FAIL");
  ::unsetenv("FAKE_NVML_GPUS");
  const EnergyCounter later = EnergyCounter::gpu(bus, FAKE_NVML);
  ASSERT_TRUE(later.available()) << later.why_not();
  ::setenv("FAKE_NVML_FAIL", "energy", 1);
  EXPECT_EQ(later.joules(), std::nullopt);
}

}  // namespace
}  // namespace cnn::test
