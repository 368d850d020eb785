// The sampling a model file recommends (radixchat/sampling.h,
// RecommendedSampling): llama.cpp's general.sampling.* keys, read leniently.
// A bad recommendation never refuses a model: the key is skipped and the
// caller's default applies. Any thread; the GgufFile must outlive the call.
#pragma once

#include "gguf-reader.h"
#include "radixchat/sampling.h"

namespace rc::model {

RecommendedSampling read_recommended_sampling(const GgufFile& file);

}  // namespace rc::model
