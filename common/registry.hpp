// The list of backends and how each registers itself.
//
// A backend folder registers its availability once (one BackendRegistration in one of its files) and each
// variant file registers its own entry next to its code (a VariantRegistration): a new variant is one new
// file, a new backend one new folder. The build (cmake/SuiteBackends.cmake) links every object of a backend
// library, so no registration is dropped, and generates the order of `suite --list` with the reason why a
// known backend was not built.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/backend.hpp"

namespace cnn {

using OpenSession = std::unique_ptr<Session> (*)(const Network& net, const RunConfig& config);

// The usual OpenSession: constructs S(net, config).
template <typename S>
std::unique_ptr<Session> open_session(const Network& net, const RunConfig& config) {
  return std::make_unique<S>(net, config);
}

// In one file of a backend folder:
//   const BackendRegistration kMine{"mymodel", [] { return Availability{true, "", "CPU, 1 thread"}; }};
struct BackendRegistration {
  BackendRegistration(std::string backend, Availability (*availability)());
};

// In each variant file, next to its code:
//   const VariantRegistration kTiled{"mymodel", 2, open_session<TiledSession>,
//       {"tiled", "what this step changes", /*layerwise=*/false}};
// `order` places the variant in its backend's list (1: the thesis' faithful port), because the order in which
// static objects of different files are constructed is unspecified.
struct VariantRegistration {
  VariantRegistration(std::string backend, int order, OpenSession open, VariantInfo info);
};

// The backend made of every registration under `name`; throws std::logic_error when there is none, or when
// variants were registered without the backend's availability, or two variants share a name.
std::unique_ptr<Backend> make_registered_backend(const std::string& name);
std::vector<std::string> registered_backend_names();  // alphabetical

struct RegistryEntry {
  std::string name;
  std::function<std::unique_ptr<Backend>()> make;  // empty when not built
  std::string not_built_reason;
  std::string kind;  // its manifest's "kind" (cpu, gpu, portable); empty for a backend the build does not know
};

// Every backend the build knows, in the build's order: the built ones made from their registrations, the
// others with why not; then backends registered in this binary that the build does not know of (test
// backends), alphabetically.
const std::vector<RegistryEntry>& all_backends();

// A variant's former name (backends/<name>/manifest.json), so that `--backend <name>:<old>`, a name scripts
// still hold, runs what it became.
struct RenamedVariant {
  std::string backend, old_name, new_name;
};
const std::vector<RenamedVariant>& renamed_variants();

// One backend as the build configured it (cmake/SuiteBackends.cmake, from the backend folders' manifests).
struct ConfiguredBackend {
  std::string name, kind;
  std::string why_not_built;  // empty when built
};
// What all_backends() is made of: the build's list of backends, in its order.
std::vector<RegistryEntry> registry_entries(const std::vector<ConfiguredBackend>& configured);

}  // namespace cnn
