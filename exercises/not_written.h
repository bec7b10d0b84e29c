// What an unfilled task throws: its tests fail with "<task>: not written yet" until you write the body.
#pragma once

#include <stdexcept>
#include <string>

namespace minigrad::exercises {

class NotWritten : public std::logic_error {
 public:
  // `task` names the task and the function, e.g. "task 1, my_sigmoid".
  explicit NotWritten(const std::string& task) : std::logic_error(task + ": not written yet") {}
};

}  // namespace minigrad::exercises
