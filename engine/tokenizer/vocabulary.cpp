// Vocabulary (radixchat/vocabulary.h) over the engine's tokenizer.
#include "radixchat/vocabulary.h"

#include <vector>

#include "tokenizer/tokenizer.h"

namespace rc {
namespace {

class TokenizerVocabulary final : public Vocabulary {
 public:
  explicit TokenizerVocabulary(std::unique_ptr<tok::Tokenizer> t) : tok_(std::move(t)) {}

  std::string text(std::span<const int64_t> ids) const override {
    std::string out;
    std::vector<int32_t> run;  // in-vocabulary ids decoded together (UTF-8 spans tokens)
    auto flush = [&] {
      if (!run.empty()) out += tok_->decode(run, /*render_special=*/true);
      run.clear();
    };
    for (int64_t id : ids) {
      if (id >= 0 && id < tok_->n_vocab()) {
        run.push_back(static_cast<int32_t>(id));
        continue;
      }
      flush();
      out += "<" + std::to_string(id) + ">";
    }
    flush();
    return out;
  }
  int size() const override { return tok_->n_vocab(); }

 private:
  std::unique_ptr<tok::Tokenizer> tok_;
};

}  // namespace

Result<std::unique_ptr<Vocabulary>> Vocabulary::load(const std::string& path) {
  auto t = tok::Tokenizer::load(path);
  if (!t.ok()) return t.status();
  return std::unique_ptr<Vocabulary>(new TokenizerVocabulary(std::move(t.value())));
}

}  // namespace rc
