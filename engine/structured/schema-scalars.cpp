#include "schema-scalars.h"

#include <algorithm>
#include <cmath>

#include "int-range.h"

namespace rc::structured {

uint32_t schema_count(const SchemaJson& s, const char* key, const std::string& where,
                      uint32_t dflt) {
  auto it = s.find(key);
  if (it == s.end()) return dflt;
  const bool whole = it->is_number_integer() ||
                     (it->is_number_float() && it->get<double>() == std::floor(it->get<double>()));
  if (!whole || it->get<double>() < 0 || it->get<double>() > 1000000) {
    fail(where, std::string("'") + key + "' must be an integer in [0, 1000000]");
  }
  return static_cast<uint32_t>(it->get<double>());
}

// minimum, maximum, exclusiveMinimum, exclusiveMaximum (a number, or
// draft 4's boolean), multipleOf: bounds on the integer part (on the
// value for integers); a bounded non-integer number has a fraction only
// where every fraction is in range.
void number_bounds(const SchemaJson& s, Node& n, const std::string& where) {
  constexpr double kLimit = 999999999999999.0;  // kMaxIntDigits nines
  double lo = -kLimit, hi = kLimit;
  bool bounded = false;
  auto num = [&](const char* key) -> const SchemaJson* {
    auto it = s.find(key);
    if (it == s.end()) return nullptr;
    if (!it->is_number() && !it->is_boolean())
      fail(where, std::string("'") + key + "' must be a number");
    return &*it;
  };
  const SchemaJson* min = num("minimum");
  const SchemaJson* max = num("maximum");
  const SchemaJson* xmin = num("exclusiveMinimum");
  const SchemaJson* xmax = num("exclusiveMaximum");
  if ((min && min->is_boolean()) || (max && max->is_boolean())) {
    fail(where, "'minimum'/'maximum' must be numbers");
  }
  auto lower = [&](double v, bool exclusive) {
    const double i = exclusive ? std::floor(v) + 1 : std::ceil(v);
    lo = std::max(lo, i);
    bounded = true;
  };
  auto upper = [&](double v, bool exclusive) {
    const double i = exclusive ? std::ceil(v) - 1 : std::floor(v);
    hi = std::min(hi, i);
    bounded = true;
  };
  if (min) lower(min->get<double>(), xmin && xmin->is_boolean() && xmin->get<bool>());
  if (max) upper(max->get<double>(), xmax && xmax->is_boolean() && xmax->get<bool>());
  if (xmin && xmin->is_number()) lower(xmin->get<double>(), true);
  if (xmax && xmax->is_number()) upper(xmax->get<double>(), true);
  if (bounded) {
    if (!(lo <= hi)) {
      fail(where, n.integer ? "no integer lies within 'minimum'/'maximum'"
                            : "'minimum'/'maximum' that hold no integer are not supported");
    }
    n.range.bounded = true;
    n.range.lo = static_cast<int64_t>(lo);
    n.range.hi = static_cast<int64_t>(hi);
  }
  if (const SchemaJson* m = num("multipleOf")) {
    if (m->is_boolean() || m->get<double>() <= 0)
      fail(where, "'multipleOf' must be a positive number");
    // m = p/q in lowest terms: its whole multiples are the multiples of p.
    const double m_value = m->get<double>();
    double p = 0;
    for (int q = 1; q <= 1000000; ++q) {
      const double x = m_value * q;
      if (std::fabs(x - std::round(x)) <= 1e-9 * std::max(1.0, x)) {
        p = std::round(x);
        break;
      }
    }
    if (p < 1 || p > kLimit) fail(where, "'multipleOf' " + m->dump() + " is not supported");
    n.range.step = static_cast<int64_t>(p);
    n.integer = true;  // whole multiples only
  }
  if ((n.range.bounded || n.range.step) && int_min_bytes(n.range) < 0) {
    fail(where, "no integer of at most 15 digits satisfies 'minimum'/'maximum'/'multipleOf'");
  }
}

// Formats written as patterns (a subset of each: lower-case hex and
// host names, http(s) URIs without query or fragment).
const char* format_pattern(const std::string& f) {
  if (f == "ipv6") return "^([0-9a-f]{1,4}:){7}[0-9a-f]{1,4}$";
  if (f == "hostname") {
    return "^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?){0,3}$";
  }
  if (f == "uri") {
    return "^https?://[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?)"
           "{0,3}(/[A-Za-z0-9._~-]*)*$";
  }
  return nullptr;
}

StringFormat string_format(const SchemaJson& s, const std::string& where) {
  auto it = s.find("format");
  if (it == s.end()) return StringFormat::none;
  if (!it->is_string()) fail(where, "'format' must be a string");
  const std::string f = it->get<std::string>();
  if (f == "date") return StringFormat::date;
  if (f == "time") return StringFormat::time;
  if (f == "date-time") return StringFormat::date_time;
  if (f == "uuid") return StringFormat::uuid;
  if (f == "email") return StringFormat::email;
  if (f == "ipv4") return StringFormat::ipv4;
  if (format_pattern(f)) return StringFormat::none;
  fail(where, "unsupported format '" + f +
                  "' (supported: date, time, date-time, uuid, email, ipv4, ipv6, hostname, uri)");
}

}  // namespace rc::structured
