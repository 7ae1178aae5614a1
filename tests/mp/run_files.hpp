#pragma once
// The files a test run leaves in its --out folder: listed, read as JSON, and rank 0's
// checkpoint (results/results_file.hpp) waited for until it holds enough rows, so a test can
// signal or kill a run at a known point instead of after a guessed sleep.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ibscope::test {

/// The results files (and checkpoints) in `dir`: everything but the run history's database
/// (ibscope.db and its SQLite side files, docs/history.md), which every run updates there.
inline std::vector<std::filesystem::path> files_in(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().filename().string().starts_with("ibscope.db")) continue;
    out.push_back(e.path());
  }
  return out;
}

inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str());
}

// Waits until the run writing to `out` has checkpointed at least `rows` rows (its collective
// rows, or soak windows); false after `limit_s`.
inline bool wait_for_checkpoint(const std::string& out, std::size_t rows, const char* section,
                                double limit_s = 60) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (std::chrono::steady_clock::now() < until) {
    for (const auto& f : files_in(out)) {
      if (!f.string().ends_with(".partial")) continue;
      nlohmann::json j;
      try {
        j = read_json(f);  // replaced atomically: whole, unless removed meanwhile
      } catch (const nlohmann::json::exception&) {
        continue;
      }
      const std::string s(section);
      // A checkpoint written before the section's first rows may lack it: not yet, not an error.
      const char* list = s == "soak" ? "windows" : "rows";
      const std::size_t n = j.contains(s) && j.at(s).contains(list) ? j.at(s).at(list).size() : 0;
      if (n >= rows) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace ibscope::test
