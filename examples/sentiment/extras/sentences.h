// The UCI Sentiment Labelled Sentences (Amazon, IMDb and Yelp sentences, one per line), which the main
// job reads for its out-of-domain checks only: never to train or to choose an option.
#pragma once

#include <filesystem>

#include "examples/sentiment/text.h"

namespace sentiment {

// "sentence<TAB>label" lines with label 0 or 1; a line of another form is skipped and counted.
LoadReport load_tsv(const std::filesystem::path& file);

}  // namespace sentiment
