#pragma once
// A minimal reader of the DOM Chromium serialises with --dump-dom: the elements in document
// order with their attributes (entities decoded), the text before each, and the SVG chart each
// sits in. Enough to check what the browser built; not a general HTML parser.

#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace ibscope::test {

struct Element {
  std::string name;  // lower case
  std::map<std::string, std::string> attrs;
  std::string text;  // text content up to the next tag (entities decoded)
  int chart = -1;    // index of the enclosing <svg class="chart ..."> in Dom::charts, or -1
  std::string attr(const std::string& key) const {
    const auto it = attrs.find(key);
    return it == attrs.end() ? std::string() : it->second;
  }
};

struct Dom {
  std::vector<Element> elements;
  std::vector<std::size_t> charts;  // index into elements of each chart's <svg>
};

inline std::string decode_entities(const std::string& s) {
  static const std::pair<const char*, const char*> kEntities[] = {{"&lt;", "<"},    {"&gt;", ">"},
                                                                  {"&quot;", "\""}, {"&#39;", "'"},
                                                                  {"&nbsp;", " "},  {"&amp;", "&"}};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    bool matched = false;
    if (s[i] == '&') {
      for (const auto& [from, to] : kEntities) {
        const std::string f(from);
        if (s.compare(i, f.size(), f) == 0) {
          out += to;
          i += f.size();
          matched = true;
          break;
        }
      }
    }
    if (!matched) out += s[i++];
  }
  return out;
}

inline Dom parse_dom(const std::string& html) {
  Dom dom;
  std::vector<int> svg_stack;  // chart index per open <svg>
  std::size_t i = 0;
  while (i < html.size()) {
    const std::size_t lt = html.find('<', i);
    if (lt == std::string::npos) break;
    if (!dom.elements.empty()) dom.elements.back().text += decode_entities(html.substr(i, lt - i));
    if (html.compare(lt, 4, "<!--") == 0) {
      const std::size_t end = html.find("-->", lt);
      i = end == std::string::npos ? html.size() : end + 3;
      continue;
    }
    std::size_t p = lt + 1;
    const bool closing = p < html.size() && html[p] == '/';
    if (closing || (p < html.size() && html[p] == '!')) ++p;
    std::string name;
    while (p < html.size() &&
           (std::isalnum(static_cast<unsigned char>(html[p])) || html[p] == '-')) {
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(html[p++])));
    }
    Element e;
    e.name = name;
    // Attributes: name, optionally = and a quoted or bare value; quoted values may hold '>'.
    while (p < html.size() && html[p] != '>') {
      if (std::isspace(static_cast<unsigned char>(html[p])) || html[p] == '/') {
        ++p;
        continue;
      }
      std::string key;
      while (p < html.size() && !std::isspace(static_cast<unsigned char>(html[p])) &&
             html[p] != '=' && html[p] != '>' && html[p] != '/') {
        key += html[p++];
      }
      std::string value;
      if (p < html.size() && html[p] == '=') {
        ++p;
        if (p < html.size() && (html[p] == '"' || html[p] == '\'')) {
          const char q = html[p++];
          const std::size_t end = html.find(q, p);
          value = html.substr(p, end - p);
          p = end == std::string::npos ? html.size() : end + 1;
        } else {
          while (p < html.size() && !std::isspace(static_cast<unsigned char>(html[p])) &&
                 html[p] != '>') {
            value += html[p++];
          }
        }
      }
      if (!key.empty()) e.attrs[key] = decode_entities(value);
    }
    i = p + 1;
    if (closing) {
      if (name == "svg" && !svg_stack.empty()) svg_stack.pop_back();
      dom.elements.push_back(Element{"/" + name, {}, "", -1});
      continue;
    }
    if (name == "svg") {
      int chart = svg_stack.empty() ? -1 : svg_stack.back();
      if (e.attr("class").rfind("chart", 0) == 0) {
        chart = static_cast<int>(dom.charts.size());
        dom.charts.push_back(dom.elements.size());
      }
      svg_stack.push_back(chart);
    }
    e.chart = svg_stack.empty() ? -1 : svg_stack.back();
    dom.elements.push_back(std::move(e));
    // Raw text elements: their content is not markup.
    if (name == "script" || name == "style") {
      const std::size_t end = html.find("</" + name, i);
      i = end == std::string::npos ? html.size() : end;
    }
  }
  return dom;
}

}  // namespace ibscope::test
