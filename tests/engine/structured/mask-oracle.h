// The oracle the token-mask tests share: a token is allowed exactly when
// feeding its bytes one by one to the matcher keeps some thread alive
// (brute force, no trie, no shortcuts) and, near the constraint's budget,
// some thread after it can close in the tokens left; and a comparison of a
// constraint's mask with it over a whole vocabulary.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "structured/json-constraint.h"

namespace rc::test {

using structured::Grammar;
using structured::JsonConstraint;
using structured::Thread;
using structured::TokenTrie;

bool brute_force_allows(const Grammar& g, const std::vector<Thread>& threads,
                        const std::string& piece);

// Success when c's mask (end of generation aside) equals brute force for
// every token of `trie`; the first difference otherwise. `allowed`, when
// given, receives the allowed ids.
::testing::AssertionResult mask_equals_brute_force(JsonConstraint& c, const Grammar& g,
                                                   const TokenTrie& trie,
                                                   std::vector<int32_t>* allowed = nullptr);

}  // namespace rc::test
