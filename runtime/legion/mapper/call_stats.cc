// See call_stats.h.
#include "call_stats.h"

#include <cstdio>
#include <cstdlib>

namespace mapwright {

namespace {

const char *const kCallNames[] = {"select_task_options",
                                  "slice_task",
                                  "map_task",
                                  "select_tasks_to_map",
                                  "report_profiling",
                                  "map_task.decide",
                                  "map_task.as_before",
                                  "map_task.layout",
                                  "map_task.reuse",
                                  "map_task.find_or_create",
                                  "map_task.create_reduction",
                                  "describe"};
constexpr int kCalls = int(Call::Count);
static_assert(sizeof(kCallNames) / sizeof(kCallNames[0]) == kCalls, "a name for each call");

struct Stats {
  std::atomic<bool> on{false};
  std::string path;
  const char *mapper = "";
  std::atomic<uint64_t> calls[kCalls] = {};
  std::atomic<uint64_t> nanoseconds[kCalls] = {};
};

Stats &stats() {
  static Stats s;
  return s;
}

// At exit: the program ran to its end (a stopped run writes nothing).
void write_stats() {
  Stats &s = stats();
  FILE *f = std::fopen(s.path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "mapwright: cannot write the call stats to %s\n", s.path.c_str());
    return;
  }
  std::fprintf(f, "{\"mapper\":\"%s\",\"calls\":{", s.mapper);
  for (int i = 0; i < kCalls; i++)
    std::fprintf(f, "%s\"%s\":{\"calls\":%llu,\"us\":%.3f}", i == 0 ? "" : ",", kCallNames[i],
                 (unsigned long long)s.calls[i].load(), double(s.nanoseconds[i].load()) * 1e-3);
  std::fprintf(f, "}}\n");
  std::fclose(f);
}

}  // namespace

void enable_call_stats(const std::string &path, const char *mapper) {
  Stats &s = stats();
  s.path = path;
  s.mapper = mapper;
  s.on = true;
  std::atexit(write_stats);
}

bool call_stats_enabled() { return stats().on.load(std::memory_order_relaxed); }

void record_call(Call call, uint64_t nanoseconds) {
  Stats &s = stats();
  s.calls[int(call)].fetch_add(1, std::memory_order_relaxed);
  s.nanoseconds[int(call)].fetch_add(nanoseconds, std::memory_order_relaxed);
}

}  // namespace mapwright
