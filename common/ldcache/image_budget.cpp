#include "ldcache/image_budget.h"

#include <algorithm>
#include <string>

namespace gcr {

Status ImageBudget::charge(Budget budget, std::size_t n, std::string_view file) {
  if (Clock::now() > deadline_) {
    Error late{"over the image budget of " + std::to_string(kBudgetTime.count()) + " ms of work" +
               (file.empty() ? "" : " (" + std::string(file) + ")")};
    if (!exceeded_) exceeded_ = late;
    return late;
  }
  const auto index = static_cast<std::size_t>(budget);
  const BudgetLimit& line = kImageBudget[index];
  std::size_t& used = used_[index];
  const std::size_t total = line.per_plan ? used + std::min(n, line.limit + 1) : n;
  if (line.per_plan) used = total;
  if (total <= line.limit) return {};
  Error over{"over the image budget of " + std::to_string(line.limit) + " " +
             std::string(line.what) + (file.empty() ? "" : " (" + std::string(file) + ")")};
  if (!exceeded_) exceeded_ = over;
  return over;
}

}  // namespace gcr
