// The attention weights of one layer and head over a review's tokens, as a heatmap picture.
#pragma once

#include <string>
#include <vector>

#include "examples/plot/plot.h"

namespace sentiment {

// weights: (T, T), queries by keys; tokens: the T tokens.
inline void write_attention_heatmap(const std::string& path, const minigrad::Tensor& weights,
                                    const std::vector<std::string>& tokens, const std::string& title) {
  plot::heatmap(path, weights,
                {.title = title,
                 .x_label = "key",
                 .y_label = "query",
                 .colorbar_label = "weight",
                 .x_ticks = tokens,
                 .y_ticks = tokens,
                 .rows_downward = true});
}

}  // namespace sentiment
