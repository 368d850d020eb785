// Document nodes in the tree view (docs/architecture.md section 21): a node
// whose span holds the header of a document the prompt layout placed
// (radixchat/documents.h: "### Document: NAME", "(excerpts)" for retrieved
// chunks) is labelled with a document mark and the file's name, so a
// student sees which document a shared prefix is. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rc::ui::panel {

// The names of the documents whose headers `decoded` (a node's decoded
// span) holds, in order; retrieved ones end in " (excerpts)". `before` is
// the text just before the span on its path (the parent's tail): a header
// the parent begins and the span ends is the span's, as where two layouts
// part inside a header ("### Document: " shared, the names not).
std::vector<std::string> document_names(const std::string& decoded, std::string_view before = {});

// "▤ notes.md ▤ paper.txt (excerpts) · " followed by `decoded` when it holds
// document headers; `decoded` unchanged otherwise.
std::string with_document_mark(const std::string& decoded, std::string_view before = {});

}  // namespace rc::ui::panel
