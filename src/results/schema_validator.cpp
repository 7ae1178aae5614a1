#include "schema_validator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
#include <vector>

#include "ibscope/core/error.hpp"
#include "ibscope/results/baseline.hpp"
#include "ibscope/results/schema.hpp"

namespace ibscope::results {
namespace {

using nlohmann::json;

struct Loaded {
  Loaded(std::string_view schema_json, std::string name) : label(std::move(name)) {
    try {
      text = json::parse(schema_json);
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      valijson::adapters::NlohmannJsonAdapter adapter(text);
      parser.populateSchema(adapter, schema);
    } catch (const std::exception& e) {
      throw Error(ErrorKind::kSystem,
                  fmt::format("the embedded {} is broken: {}", label, e.what()));
    }
  }
  std::string label;  ///< "results schema version 2"
  json text;
  valijson::Schema schema;
};

// Parsed once: the schema is constant for the life of the binary. A schema that does not parse
// is a build defect, reported as such rather than blamed on the file being checked.
const Loaded& loaded() {
  static const Loaded kLoaded(schema_text(),
                              fmt::format("results schema version {}", kSupportedSchemaVersion));
  return kLoaded;
}

const Loaded& loaded_baseline() {
  static const Loaded kLoaded(baseline_schema_text(),
                              fmt::format("baseline schema version {}", kBaselineVersion));
  return kLoaded;
}

// One step of a path: an object key or an array index.
struct Step {
  std::string key;
  std::size_t index = 0;
  bool is_index = false;
};

std::string dotted(const std::vector<Step>& path) {
  std::string out;
  for (const auto& s : path) {
    if (s.is_index) {
      out += fmt::format("[{}]", s.index);
    } else {
      if (!out.empty()) out += '.';
      out += s.key;
    }
  }
  return out.empty() ? "<top>" : out;
}

// valijson's context is "<root>" then "[name]" or "[index]" per step; whether a step is an index
// is decided by the document, so a key such as "[0]" cannot be misread.
std::vector<Step> steps_of(const std::vector<std::string>& context, const json& doc) {
  std::vector<Step> out;
  const json* node = &doc;
  for (std::size_t i = 1; i < context.size(); ++i) {
    const std::string& c = context[i];
    const std::string token =
        c.size() >= 2 && c.front() == '[' && c.back() == ']' ? c.substr(1, c.size() - 2) : c;
    Step s;
    if (node != nullptr && node->is_array()) {
      s.is_index = true;
      s.index = static_cast<std::size_t>(std::stoull(token));
      node = s.index < node->size() ? &(*node)[s.index] : nullptr;
    } else {
      s.key = token;
      node =
          node != nullptr && node->is_object() && node->contains(token) ? &(*node)[token] : nullptr;
    }
    out.push_back(std::move(s));
  }
  return out;
}

const json* value_at(const json& doc, const std::vector<Step>& path) {
  const json* node = &doc;
  for (const auto& s : path) {
    if (s.is_index) {
      if (!node->is_array() || s.index >= node->size()) return nullptr;
      node = &(*node)[s.index];
    } else {
      if (!node->is_object() || !node->contains(s.key)) return nullptr;
      node = &(*node)[s.key];
    }
  }
  return node;
}

const json* resolve(const json& root, const json* node) {
  for (int hops = 0; node != nullptr && node->is_object() && node->contains("$ref") && hops < 8;
       ++hops) {
    const std::string ref = (*node)["$ref"].get<std::string>();
    if (ref.rfind("#/", 0) != 0) return nullptr;
    const json::json_pointer pointer(ref.substr(1));
    node = root.contains(pointer) ? &root[pointer] : nullptr;
  }
  return node;
}

// The subschema that governs the value at `path` (properties, additionalProperties, items).
const json* schema_at(const json& root, const std::vector<Step>& path) {
  const json* node = resolve(root, &root);
  for (const auto& s : path) {
    if (node == nullptr || !node->is_object()) return nullptr;
    if (s.is_index) {
      node = node->contains("items") ? &(*node)["items"] : nullptr;
    } else if (node->contains("properties") && (*node)["properties"].contains(s.key)) {
      node = &(*node)["properties"][s.key];
    } else if (node->contains("additionalProperties") &&
               (*node)["additionalProperties"].is_object()) {
      node = &(*node)["additionalProperties"];
    } else {
      return nullptr;
    }
    node = resolve(root, node);
  }
  return node;
}

std::string type_words(const std::string& t) {
  if (t == "integer") return "an integer";
  if (t == "number") return "a number";
  if (t == "string") return "a string";
  if (t == "boolean") return "true or false";
  if (t == "object") return "an object";
  if (t == "array") return "an array";
  if (t == "null") return "null";
  return t;
}

// "an integer or null" from the subschema's "type".
std::string expected_types(const json* schema) {
  if (schema == nullptr || !schema->contains("type")) return "another type";
  const json& t = (*schema)["type"];
  if (t.is_string()) return type_words(t.get<std::string>());
  std::string out;
  for (const auto& one : t) {
    if (!out.empty()) out += " or ";
    out += type_words(one.get<std::string>());
  }
  return out;
}

// The last '...' in a valijson message: the property it is about.
std::string quoted(const std::string& description) {
  const auto close = description.rfind('\'');
  if (close == std::string::npos || close == 0) return {};
  const auto open = description.rfind('\'', close - 1);
  if (open == std::string::npos) return {};
  return description.substr(open + 1, close - open - 1);
}

std::string describe(const valijson::ValidationResults::Error& e, const json& doc,
                     const json& schema, const std::string& label) {
  std::vector<Step> path = steps_of(e.context, doc);
  const std::string& d = e.description;
  if (d.rfind("Missing required property", 0) == 0) {
    path.push_back({quoted(d), 0, false});
    return fmt::format("{}: missing", dotted(path));
  }
  if (d.rfind("Object contains a property that could not be validated", 0) == 0) {
    path.push_back({quoted(d), 0, false});
    return fmt::format("{}: unknown field (not in {}; misspelt?)", dotted(path), label);
  }
  const json* value = value_at(doc, path);
  const json* sub = schema_at(schema, path);
  const std::string got = value == nullptr ? "?" : value->dump();
  if (d.rfind("Value type not permitted", 0) == 0) {
    return fmt::format("{}: expected {}, got {}", dotted(path), expected_types(sub),
                       value == nullptr ? "?" : value->type_name());
  }
  if (d.rfind("Failed to match against any enum values", 0) == 0 && sub != nullptr &&
      sub->contains("enum")) {
    std::string allowed;
    for (const auto& v : (*sub)["enum"]) allowed += (allowed.empty() ? "" : ", ") + v.dump();
    return fmt::format("{}: unknown value {} (expected one of {})", dotted(path), got, allowed);
  }
  if (d.rfind("Failed to match expected value set by 'const'", 0) == 0 && sub != nullptr &&
      sub->contains("const")) {
    return fmt::format("{}: expected {}, got {}", dotted(path), (*sub)["const"].dump(), got);
  }
  if (d.rfind("Expected number greater than", 0) == 0 && sub != nullptr &&
      sub->contains("minimum")) {
    const json& min = (*sub)["minimum"];
    if (min == 0) return fmt::format("{}: negative ({})", dotted(path), got);
    return fmt::format("{}: {} is below the minimum {}", dotted(path), got, min.dump());
  }
  return fmt::format("{}: {}", dotted(path), d);
}

// The messages valijson adds above a failure ("Failed to validate against schema associated
// with property name 'rows'", "Failed to validate item #3 in array") only repeat the path.
bool is_summary(const std::string& d) {
  return d.rfind("Failed to validate against schema associated with property", 0) == 0 ||
         d.rfind("Failed to validate item #", 0) == 0 ||
         d.rfind("Failed to validate against additional properties schema", 0) == 0;
}

[[noreturn]] void fail(std::string_view source, const std::string& what) {
  throw UsageError(fmt::format("{}: {}", source, what));
}

// schema_version first, so that a file of another version gets the version message rather than
// the first field that version happens to spell differently.
void check_version(const json& doc, std::string_view source) {
  if (!doc.is_object()) fail(source, "<top>: expected a JSON object at the top level");
  const auto v = doc.find("schema_version");
  if (v == doc.end()) fail(source, "schema_version: missing");
  if (!v->is_number_integer()) {
    fail(source, fmt::format("schema_version: expected an integer, got {}", v->type_name()));
  }
  // Compared as JSON numbers: get<int>() would narrow 4294967297 to 1 and accept it.
  if (*v != kSupportedSchemaVersion) {
    fail(source, fmt::format("schema_version: version {} is not supported (this ibscope reads "
                             "schema versions 1 to {})",
                             v->dump(), kSupportedSchemaVersion));
  }
  const auto tool = doc.find("tool");
  if (tool != doc.end() && tool->is_object() && tool->contains("name") &&
      (*tool)["name"] != "ibscope") {
    fail(source, fmt::format("tool.name: {}: not an ibscope results file", (*tool)["name"].dump()));
  }
}

void validate_against(const Loaded& l, const json& doc, std::string_view source) {
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(doc);
  if (validator.validate(l.schema, target, &results)) return;
  const valijson::ValidationResults::Error* first = nullptr;
  for (const auto& e : results) {
    if (!is_summary(e.description)) {
      first = &e;
      break;
    }
  }
  if (first == nullptr) first = &*results.begin();
  fail(source, describe(*first, doc, l.text, l.label));
}

}  // namespace

void validate_schema(const json& doc, std::string_view source) {
  check_version(doc, source);
  validate_against(loaded(), doc, source);
}

void validate_baseline_schema(const json& doc, std::string_view source) {
  if (!doc.is_object()) fail(source, "<top>: expected a JSON object at the top level");
  const auto v = doc.find("baseline_version");
  if (v == doc.end()) {
    fail(source, doc.contains("schema_version")
                     ? "this is an ibscope results file, not a baseline (make a baseline of "
                       "results files with `ibscope baseline RUN.json... -o FILE`)"
                     : "baseline_version: missing (not an ibscope baseline file)");
  }
  if (!v->is_number_integer() || *v != kBaselineVersion) {
    fail(source, fmt::format("baseline_version: version {} is not supported (this ibscope reads "
                             "baseline version {})",
                             v->dump(), kBaselineVersion));
  }
  validate_against(loaded_baseline(), doc, source);
}

}  // namespace ibscope::results
