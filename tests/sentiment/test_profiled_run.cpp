// ProfiledRun (examples/sentiment/extras/profiled_run.h): the run's own hooks all still run, and perf is
// told "enable" after step `first` and "disable" after step `last`, each through PerfControl's FIFOs. perf's
// side is played by a thread that reads the commands and acknowledges each, as `perf record --control`
// does.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "examples/sentiment/extras/profiled_run.h"
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;
using namespace sentiment;
namespace fs = std::filesystem;

namespace {

// The run's own hooks, counting their calls.
struct CountingHooks : TrainingHooks {
  int starts = 0, steps = 0, ends = 0;
  void start(Position&, Optimizers&) override { ++starts; }
  void after_step(const Position&, bool, Optimizers&) override { ++steps; }
  void end(const Position&, Optimizers&) override { ++ends; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(profiled_run)

BOOST_AUTO_TEST_CASE(perf_is_on_for_the_chosen_steps_alone) {
  const fs::path dir = fs::temp_directory_path() / ("profiled_run_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string control = (dir / "control").string(), ack = (dir / "ack").string();
  BOOST_REQUIRE(mkfifo(control.c_str(), 0600) == 0 && mkfifo(ack.c_str(), 0600) == 0);
  // perf's ends, open before the program's: a read end on the control FIFO, the write end on the ack FIFO.
  const int commands_in = open(control.c_str(), O_RDONLY | O_NONBLOCK);
  const int acks_out = open(ack.c_str(), O_RDWR);
  BOOST_REQUIRE(commands_in >= 0 && acks_out >= 0);

  std::vector<std::string> heard;  // what perf was told, with the step count at that moment
  std::atomic<int> steps_done = 0;
  {
    const examples::PerfControl perf(control + "," + ack);
    std::thread perf_side([&] {
      std::string pending;
      while (heard.size() < 2) {
        pollfd ready{commands_in, POLLIN, 0};
        if (poll(&ready, 1, 10000) != 1) break;  // the test fails below, without hanging
        char buffer[64];
        const ssize_t n = read(commands_in, buffer, sizeof buffer);
        if (n <= 0) continue;
        pending.append(buffer, static_cast<size_t>(n));
        for (size_t end; (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1)) {
          heard.push_back(pending.substr(0, end) + " after " + std::to_string(steps_done.load()));
          BOOST_REQUIRE(write(acks_out, "ack\n", 4) == 4);
        }
      }
    });

    Config config = small_transformer<Config>(/*width=*/8, /*batch_size=*/4, /*lr=*/1e-3);
    config.max_len = 16;
    SentimentModel model(config, /*vocab_size=*/20);
    Optimizers optimizers(model, config);
    CountingHooks run;
    ProfiledRun profiled(run, perf, /*first=*/2, /*last=*/4);
    Position at;
    profiled.start(at, optimizers);
    for (at.step = 1; at.step <= 6; ++at.step) {
      steps_done = static_cast<int>(at.step);
      profiled.after_step(at, at.step == 6, optimizers);
    }
    profiled.end(at, optimizers);
    perf_side.join();
    BOOST_TEST(run.starts == 1);
    BOOST_TEST(run.steps == 6);
    BOOST_TEST(run.ends == 1);
  }
  close(commands_in);
  close(acks_out);
  fs::remove_all(dir);
  BOOST_TEST(heard == (std::vector<std::string>{"enable after 2", "disable after 4"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_perf_control_that_cannot_be_opened_is_refused_naming_the_flag) {
  expect_error_containing<ValueError>([] { examples::PerfControl("/no/such/control,/no/such/ack"); },
                                      "--perf-control: /no/such/control");
  expect_error_containing<ValueError>([] { examples::PerfControl("no-comma"); }, "takes CONTROL,ACK");
}

BOOST_AUTO_TEST_SUITE_END()
