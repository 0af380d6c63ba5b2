// demo-driver: drives the demo stack (scripts/stack.sh) through the main job's scenarios with
// real HTTP requests, prints a table of what each step returned beside what it must return, and
// exits 1 when any step differs (so `make test` runs the very same steps as `make demo`).
//   demo-driver --service URL --processor URL --db URI --stack scripts/stack.sh
//               --token T --other-token T [--plant]
#include <cstdio>
#include <string>

#include "driver.hpp"

int main(int argc, char** argv) {
  demo::Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--plant") {
      config.plant = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "demo-driver: %s needs a value\n", arg.c_str());
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "--service") config.service_url = value;
    else if (arg == "--processor") config.processor_url = value;
    else if (arg == "--db") config.db_url = value;
    else if (arg == "--stack") config.stack = value;
    else if (arg == "--token") config.token = value;
    else if (arg == "--other-token") config.other_token = value;
    else {
      std::fprintf(stderr, "demo-driver: unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  demo::Driver d(config);
  try {
    demo::run_scenarios(d);
    demo::totals_and_forensics(d);
    if (config.plant) {
      demo::plant_double_charge(d);
      demo::plant_discrepancies(d);
    }
  } catch (const std::exception& e) {
    d.check("the driver itself", "no error", e.what());
  }
  d.print_table();
  std::printf("\n%s\n", d.failures() == 0 ? "every step returned what it must" : "SOME STEPS DIFFER (marked above)");
  return d.failures() == 0 ? 0 : 1;
}
