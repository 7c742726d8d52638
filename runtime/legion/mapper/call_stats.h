// What mapper calls cost: per Legion mapper callback, how many calls and
// how long they took in all, for `mapwright bench mapper`'s comparison
// with Legion's DefaultMapper. Written as JSON when the program exits
// (-mapwright:stats FILE); nothing is timed without the flag.
#ifndef MAPWRIGHT_CALL_STATS_H
#define MAPWRIGHT_CALL_STATS_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace mapwright {

enum class Call {
  SelectTaskOptions,
  SliceTask,
  MapTask,
  SelectTasksToMap,
  ReportProfiling,
  // Parts of map_task: what its time is made of.
  MapTaskDecide,
  MapTaskAsBefore,
  MapTaskLayout,
  MapTaskReuse,
  MapTaskFindOrCreate,
  MapTaskCreateReduction,
  // A launch described to Rust (the first call on each launch).
  Describe,
  Count
};

// Starts timing: where the stats go and which mapper was timed.
void enable_call_stats(const std::string &path, const char *mapper);
bool call_stats_enabled();
void record_call(Call call, uint64_t nanoseconds);

// Times the enclosing scope as one call of `call`.
class CallTimer {
 public:
  explicit CallTimer(Call call) : call_(call), on_(call_stats_enabled()) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~CallTimer() {
    if (on_)
      record_call(call_, uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now() - start_)
                                      .count()));
  }
  CallTimer(const CallTimer &) = delete;
  CallTimer &operator=(const CallTimer &) = delete;

 private:
  Call call_;
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace mapwright

#endif
