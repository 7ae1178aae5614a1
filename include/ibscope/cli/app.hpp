#pragma once
/// The `ibscope` command line: the only place that reads argv. Returns the process exit status:
/// 0 success, 1 the measurement failed (#wrong > 0, a peer lost, a deadline passed), 2 usage.

namespace ibscope::cli {

int run(int argc, char** argv);

}  // namespace ibscope::cli
