// Text, CSV, JSON and SVG for lab results: no GPU here.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lab/lab.h"

namespace cudojo::lab {

namespace {

std::string cell_text(const nlohmann::json& cell) {
  if (cell.is_null()) return "-";
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_boolean()) return cell.get<bool>() ? "yes" : "no";
  if (cell.is_number_integer()) return fmt::format("{}", cell.get<long long>());
  const double value = cell.get<double>();
  if (value != 0 && (std::fabs(value) < 1e-3 || std::fabs(value) >= 1e7)) return fmt::format("{:.4g}", value);
  return fmt::format("{:.4f}", value);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_text(const Result& result) {
  std::ostringstream out;
  out << "== " << result.experiment << ": " << result.summary << "\n";
  for (const auto& table : result.tables) {
    out << "\n" << table.title << "\n";
    std::vector<std::size_t> widths;
    for (const auto& column : table.columns) widths.push_back(column.size());
    std::vector<std::vector<std::string>> cells;
    for (const auto& row : table.rows) {
      std::vector<std::string> line;
      for (std::size_t c = 0; c < row.size(); ++c) {
        line.push_back(cell_text(row[c]));
        if (c < widths.size()) widths[c] = std::max(widths[c], line.back().size());
      }
      cells.push_back(std::move(line));
    }
    for (std::size_t c = 0; c < table.columns.size(); ++c)
      out << fmt::format("{:>{}}  ", table.columns[c], widths[c]);
    out << "\n";
    for (const auto& line : cells) {
      for (std::size_t c = 0; c < line.size() && c < widths.size(); ++c)
        out << fmt::format("{:>{}}  ", line[c], widths[c]);
      out << "\n";
    }
    for (const auto& note : table.notes) out << "  " << note << "\n";
  }
  if (!result.failures.empty()) {
    out << "\nFAILED CHECKS (" << result.failures.size() << "):\n";
    for (const auto& failure : result.failures) out << "  " << failure << "\n";
  }
  return out.str();
}

std::string render_csv(const std::vector<Result>& results) {
  std::ostringstream out;
  for (const auto& result : results) {
    for (const auto& table : result.tables) {
      out << "experiment,table";
      for (const auto& column : table.columns) out << "," << csv_field(column);
      out << "\n";
      for (const auto& row : table.rows) {
        out << csv_field(result.experiment) << "," << csv_field(table.title);
        for (const auto& cell : row) out << "," << csv_field(cell.is_null() ? "" : cell_text(cell));
        out << "\n";
      }
    }
  }
  return out.str();
}

void to_json(nlohmann::json& j, const Result& result) {
  j = {{"experiment", result.experiment}, {"summary", result.summary}, {"failures", result.failures}};
  j["tables"] = nlohmann::json::array();
  for (const auto& table : result.tables) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : table.rows) {
      nlohmann::json object = nlohmann::json::object();
      for (std::size_t c = 0; c < row.size() && c < table.columns.size(); ++c)
        object[table.columns[c]] = row[c];
      rows.push_back(object);
    }
    j["tables"].push_back(
        {{"title", table.title}, {"columns", table.columns}, {"rows", rows}, {"notes", table.notes}});
  }
}

std::string render_svg(const Plot& plot) {
  constexpr double kWidth = 900, kHeight = 560, kLeft = 80, kRight = 190, kTop = 50, kBottom = 60;
  constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                      "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  double x_min = 1e300, x_max = -1e300, y_max = 0;
  for (const auto& series : plot.series) {
    for (auto [x, y] : series.points) {
      const double px = plot.log2_x ? std::log2(x) : x;
      x_min = std::min(x_min, px);
      x_max = std::max(x_max, px);
      y_max = std::max(y_max, y);
    }
  }
  if (x_min > x_max) x_min = 0, x_max = 1;
  if (x_max == x_min) x_max = x_min + 1;
  if (y_max <= 0) y_max = 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(y_max)));
  const double y_top = std::ceil(y_max / magnitude) * magnitude;
  auto sx = [&](double x) {
    const double px = plot.log2_x ? std::log2(x) : x;
    return kLeft + (px - x_min) / (x_max - x_min) * (kWidth - kLeft - kRight);
  };
  auto sy = [&](double y) { return kHeight - kBottom - y / y_top * (kHeight - kTop - kBottom); };

  std::ostringstream svg;
  svg << fmt::format(
             R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif" font-size="12">)svg",
             kWidth, kHeight, kWidth, kHeight)
      << "\n";
  svg << fmt::format(
             R"svg(<rect width="100%" height="100%" fill="white"/><text x="{}" y="28" font-size="16" text-anchor="middle">{}</text>)svg",
             (kWidth - kRight + kLeft) / 2, xml_escape(plot.title))
      << "\n";
  for (int tick = 0; tick <= 5; ++tick) {
    const double y = y_top * tick / 5;
    svg << fmt::format(
               R"svg(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ddd"/><text x="{:.1f}" y="{:.1f}" text-anchor="end">{:g}</text>)svg",
               kLeft, sy(y), kWidth - kRight, sy(y), kLeft - 6, sy(y) + 4, y)
        << "\n";
  }
  for (double px = std::ceil(x_min); px <= x_max + 1e-9; px += plot.log2_x ? 2 : (x_max - x_min) / 8) {
    const double x = plot.log2_x ? std::exp2(px) : px;
    const std::string label = plot.log2_x ? fmt::format("2^{:g}", px) : fmt::format("{:g}", px);
    svg << fmt::format(
               R"svg(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/><text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)svg",
               sx(x), kTop, sx(x), kHeight - kBottom, sx(x), kHeight - kBottom + 18, label)
        << "\n";
  }
  svg << fmt::format(R"svg(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)svg",
                     (kWidth - kRight + kLeft) / 2, kHeight - 18, xml_escape(plot.x_label))
      << "\n";
  svg << fmt::format(
             R"svg(<text transform="translate(20,{:.1f}) rotate(-90)" text-anchor="middle">{}</text>)svg",
             (kHeight - kBottom + kTop) / 2, xml_escape(plot.y_label))
      << "\n";
  for (std::size_t s = 0; s < plot.series.size(); ++s) {
    const auto& series = plot.series[s];
    const char* colour = kColours[s % std::size(kColours)];
    std::string points;
    for (auto [x, y] : series.points) points += fmt::format("{:.1f},{:.1f} ", sx(x), sy(y));
    svg << fmt::format(R"svg(<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>)svg", colour,
                       points)
        << "\n";
    for (auto [x, y] : series.points) {
      svg << fmt::format(R"svg(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"/>)svg", sx(x), sy(y), colour);
    }
    const double legend_y = kTop + 20.0 * static_cast<double>(s);
    svg << fmt::format(
               R"svg(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="3"/><text x="{:.1f}" y="{:.1f}">{}</text>)svg",
               kWidth - kRight + 15, legend_y, kWidth - kRight + 40, legend_y, colour, kWidth - kRight + 46,
               legend_y + 4, xml_escape(series.name))
        << "\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

int exit_code(const std::vector<Result>& results) {
  for (const auto& result : results) {
    if (!result.failures.empty()) return 1;
  }
  return 0;
}

}  // namespace cudojo::lab
