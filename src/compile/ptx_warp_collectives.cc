#include "compile/ptx_warp_collectives.h"

#include <fmt/format.h>

#include <regex>
#include <sstream>
#include <vector>

#include "compile/check_build.h"
#include "compile/ptx_lines.h"

namespace cudojo {

namespace {

// `@%p1 shfl.sync.down.b32 %r5|%p2, %r4, 16, 31, -1;`: the optional guard, the opcode, and the
// operands up to the `;`, whose last is the member mask (an immediate or a register).
const std::regex kCollective(
    R"(^\s*(@(!?)(%[\w$]+)\s+)?((shfl\.sync|vote\.sync|match\.\w+\.sync|redux\.sync|bar\.warp\.sync|elect\.sync)[\w.]*)\s+([^;]*);)");
// A thread leaving the kernel: `ret` in an entry, `exit` anywhere, either maybe guarded.
const std::regex kLeave(R"(^\s*(@(!?)(%[\w$]+)\s+)?(ret|exit)(\.uni)?\s*;)");
const std::regex kAddressSize(R"(^\s*\.address_size\s+64\b)");
constexpr std::size_t kLongestSearchedLine = 1024;

WarpCollectiveKind kind_of(const std::string& opcode) {
  if (opcode.starts_with("shfl")) return WarpCollectiveKind::kShuffle;
  if (opcode.starts_with("vote")) return WarpCollectiveKind::kVote;
  if (opcode.starts_with("match")) return WarpCollectiveKind::kMatch;
  if (opcode.starts_with("redux")) return WarpCollectiveKind::kReduce;
  if (opcode.starts_with("bar.warp")) return WarpCollectiveKind::kSyncwarp;
  return WarpCollectiveKind::kElect;
}

// Leaves in %cwd0 the warp's slot, in %cwd1 the address of its word, in %cwp0 whether the slot is
// in the table, in %cwr3 the block's linear index (low 32 bits) and in %cwr4 the warp in the block.
constexpr const char* kWarpSlot = R"(	mov.u32 %cwr0, %ctaid.z;
	mov.u32 %cwr1, %nctaid.y;
	mov.u32 %cwr2, %ctaid.y;
	cvt.u64.u32 %cwd0, %cwr2;
	mad.wide.u32 %cwd0, %cwr0, %cwr1, %cwd0;
	mov.u32 %cwr0, %nctaid.x;
	cvt.u64.u32 %cwd1, %cwr0;
	mov.u32 %cwr2, %ctaid.x;
	cvt.u64.u32 %cwd2, %cwr2;
	mad.lo.u64 %cwd0, %cwd0, %cwd1, %cwd2;
	cvt.u32.u64 %cwr6, %cwd0;
	mov.u32 %cwr0, %ntid.x;
	mov.u32 %cwr1, %ntid.y;
	mov.u32 %cwr2, %ntid.z;
	mul.lo.u32 %cwr3, %cwr0, %cwr1;
	mul.lo.u32 %cwr3, %cwr3, %cwr2;
	add.u32 %cwr3, %cwr3, 31;
	shr.u32 %cwr3, %cwr3, 5;
	mov.u32 %cwr4, %tid.z;
	mov.u32 %cwr5, %tid.y;
	mad.lo.u32 %cwr4, %cwr4, %cwr1, %cwr5;
	mov.u32 %cwr5, %tid.x;
	mad.lo.u32 %cwr4, %cwr4, %cwr0, %cwr5;
	shr.u32 %cwr4, %cwr4, 5;
	cvt.u64.u32 %cwd1, %cwr3;
	cvt.u64.u32 %cwd2, %cwr4;
	mad.lo.u64 %cwd0, %cwd0, %cwd1, %cwd2;
	setp.lt.u64 %cwp0, %cwd0, {slots};
	mov.u64 %cwd2, {gone};
	shl.b64 %cwd1, %cwd0, 2;
	add.u64 %cwd1, %cwd2, %cwd1;
	mov.u32 %cwr3, %cwr6;
)";

std::string slot_code() {
  return fmt::format(fmt::runtime(kWarpSlot), fmt::arg("slots", kWarpSlots),
                     fmt::arg("gone", kWarpGoneSymbol));
}

constexpr const char* kRegisters =
    "\t.reg .pred %cwp<4>;\n\t.reg .pred %cwk_ran;\n\t.reg .b32 %cwr<9>;\n\t.reg .b32 %cwb<9>;\n"
    "\t.reg .b32 %cwa;\n\t.reg .b64 %cwd<3>;\n";

// Before a thread leaves: its lane's bit in its warp's word, made visible before it goes.
std::string leaving_block() {
  return std::string("\t{ // cudojo warp check: this lane leaves the kernel\n") + kRegisters + slot_code() +
         "\tmov.u32 %cwr7, %laneid;\n"
         "\tmov.u32 %cwr8, 1;\n"
         "\tshl.b32 %cwr8, %cwr8, %cwr7;\n"
         "\t@%cwp0 red.global.or.b32 [%cwd1], %cwr8;\n"
         "\tmembar.gl;\n"
         "\t}\n";
}

// A shuffle's operands, all but the mask: `d|p, a, b, c` (b: lane or offset, c: clamp and segment).
struct ShuffleOperands {
  std::string destination;  // the value register of `d|p`
  std::string mode;         // "up", "down", "bfly", "idx"
  std::string lane_or_offset;
  std::string clamp;
};

std::vector<std::string> operands_of(const std::string& text) {
  std::vector<std::string> operands;
  std::string current;
  for (const char c : text + ",") {
    if (c != ',') {
      current += c;
      continue;
    }
    const auto first = current.find_first_not_of(" \t");
    const auto last = current.find_last_not_of(" \t");
    operands.push_back(first == std::string::npos ? "" : current.substr(first, last - first + 1));
    current.clear();
  }
  return operands;
}

// Which lane a shuffle reads, as the PTX ISA defines it, into %cwb6: from the lane or offset
// (%cwb0), the clamp and segment (%cwb1) and this lane (%cwb2); out of range, its own lane.
std::string shuffle_source_code(const ShuffleOperands& shuffle) {
  std::string code =
      "\tmov.u32 %cwb2, %laneid;\n"
      "\tand.b32 %cwb0, %cwb0, 31;\n"
      "\tshr.u32 %cwb3, %cwb1, 8;\n"
      "\tand.b32 %cwb3, %cwb3, 31;\n"
      "\tand.b32 %cwb1, %cwb1, 31;\n"
      "\tand.b32 %cwb4, %cwb2, %cwb3;\n"
      "\tnot.b32 %cwb5, %cwb3;\n"
      "\tand.b32 %cwb5, %cwb1, %cwb5;\n"
      "\tor.b32 %cwb5, %cwb5, %cwb4;\n";
  if (shuffle.mode == "up") {
    code += "\tsub.s32 %cwb6, %cwb2, %cwb0;\n\tsetp.ge.s32 %cwp3, %cwb6, %cwb5;\n";
  } else if (shuffle.mode == "down") {
    code += "\tadd.s32 %cwb6, %cwb2, %cwb0;\n\tsetp.le.s32 %cwp3, %cwb6, %cwb5;\n";
  } else if (shuffle.mode == "bfly") {
    code += "\txor.b32 %cwb6, %cwb2, %cwb0;\n\tsetp.le.s32 %cwp3, %cwb6, %cwb5;\n";
  } else {
    code +=
        "\tnot.b32 %cwb7, %cwb3;\n\tand.b32 %cwb7, %cwb0, %cwb7;\n\tor.b32 %cwb6, %cwb4, %cwb7;\n"
        "\tsetp.le.s32 %cwp3, %cwb6, %cwb5;\n";
  }
  code += "\tselp.b32 %cwb6, %cwb6, %cwb2, %cwp3;\n";
  return code;
}

// Where a sighting is kept when `sighted` holds: the first one of `record` (0: a mask that named
// gone lanes, 1: a shuffle that read a gone lane) takes the line, block, warp, lanes and kind.
std::string keep_first_sighting(const char* sighted, unsigned record, unsigned learner_line,
                                const char* lanes, const std::string& kind) {
  const unsigned base = record * kRecordFields * 4;
  return fmt::format(
      "\tmov.u32 %cwr6, 1;\n"
      "\t@{sighted} atom.global.cas.b32 %cwr6, [%cwd2+{taken}], 0, 1;\n"
      "\tsetp.eq.and.u32 %cwp2, %cwr6, 0, {sighted};\n"
      "\t@%cwp2 st.global.u32 [%cwd2+{at_line}], {line};\n"
      "\t@%cwp2 st.global.u32 [%cwd2+{at_block}], %cwr3;\n"
      "\t@%cwp2 st.global.u32 [%cwd2+{at_warp}], %cwr4;\n"
      "\t@%cwp2 st.global.u32 [%cwd2+{at_lanes}], {lanes};\n"
      "\t@%cwp2 st.global.u32 [%cwd2+{at_kind}], {kind};\n",
      fmt::arg("sighted", sighted), fmt::arg("taken", base + kRecordTaken * 4),
      fmt::arg("line", learner_line), fmt::arg("at_line", base + kRecordLine * 4),
      fmt::arg("at_block", base + kRecordBlock * 4), fmt::arg("at_warp", base + kRecordWarp * 4),
      fmt::arg("at_lanes", base + kRecordGoneLanes * 4), fmt::arg("lanes", lanes),
      fmt::arg("at_kind", base + kRecordKind * 4), fmt::arg("kind", kind));
}

// The collective `line`, wrapped: its operands are kept before it runs (one may be a register the
// collective writes), and after it each lane that ran it looks for gone lanes in the mask. A
// shuffle also checks the lane it read against the lanes running it (__activemask() right after
// it): with a mask of only the lanes present (__activemask() after an early return) the shuffle
// does not wait for the lanes that return, so their gone marks may not be set yet, but they are
// not running it, and what is read from them is undefined. That is harmless if the kernel drops
// the value, so the check build replaces it with a loud one (FLT_MAX, or 2139095039 as an
// integer) and the sighting counts only if the launch's answer then comes out wrong.
std::string checked_collective(const std::string& line, const std::string& mask, const std::string& guard,
                               bool guard_negated, WarpCollectiveKind kind, unsigned learner_line,
                               const std::optional<ShuffleOperands>& shuffle) {
  const unsigned line_slot = learner_line < kBarrierLineSlots ? learner_line : 0u;
  std::string ran = "\tsetp.eq.u32 %cwp2, 0, 0;\n";
  if (!guard.empty()) {
    ran = guard_negated ? fmt::format("\tnot.pred %cwp2, {};\n", guard)
                        : fmt::format("\tmov.pred %cwp2, {};\n", guard);
  }
  std::string keep = fmt::format("\tmov.b32 %cwr7, {};\n", mask);
  std::string source_check;
  if (shuffle) {
    keep +=
        fmt::format("\tmov.b32 %cwb0, {};\n\tmov.b32 %cwb1, {};\n", shuffle->lane_or_offset, shuffle->clamp);
    source_check =
        shuffle_source_code(*shuffle) +
        "\tmov.u32 %cwb7, 1;\n"
        "\tshl.b32 %cwb7, %cwb7, %cwb6;\n"
        "\tnot.b32 %cwa, %cwa;\n"
        "\tand.b32 %cwb7, %cwb7, %cwa;\n"
        "\tsetp.ne.and.u32 %cwp3, %cwb7, 0, %cwk_ran;\n" +
        fmt::format("\t@%cwp3 mov.b32 {}, 0x7F7FFFFF;\n", shuffle->destination) +
        keep_first_sighting("%cwp3", 1, learner_line, "%cwb7",
                            fmt::format("{}", static_cast<unsigned>(WarpCollectiveKind::kShuffleSource)));
  }
  return fmt::format(
      "\t{{ // cudojo warp check: does the collective at line {line} involve a lane that left?\n"
      "{registers}{keep}{ran}\tmov.pred %cwk_ran, %cwp2;\n{line_text}\n\tactivemask.b32 %cwa;\n{slot}"
      "\tmov.u32 %cwb8, 0;\n"
      "\t@%cwp0 atom.global.or.b32 %cwb8, [%cwd1], 0;\n"
      "\tand.b32 %cwr8, %cwb8, %cwr7;\n"
      "\tmov.u64 %cwd2, {record};\n"
      "\t@%cwk_ran red.global.add.u32 [%cwd2+{checked}], 1;\n"
      "\tsetp.ne.and.u32 %cwp1, %cwr8, 0, %cwk_ran;\n"
      "\tmov.u64 %cwd0, {lines};\n"
      "\t@%cwp1 red.global.add.u32 [%cwd0+{line_offset}], 1;\n"
      "{mask_sighting}{source_check}"
      "\t}}\n",
      fmt::arg("line", learner_line), fmt::arg("registers", kRegisters), fmt::arg("keep", keep),
      fmt::arg("ran", ran), fmt::arg("line_text", line), fmt::arg("slot", slot_code()),
      fmt::arg("record", kWarpMaskRecordSymbol), fmt::arg("checked", kRecordChecked * 4),
      fmt::arg("lines", kWarpMaskLinesSymbol), fmt::arg("line_offset", line_slot * 4),
      fmt::arg("mask_sighting", keep_first_sighting("%cwp1", 0, learner_line, "%cwr8",
                                                    fmt::format("{}", static_cast<unsigned>(kind)))),
      fmt::arg("source_check", source_check));
}

std::string declarations() {
  return fmt::format(
      "\n// cudojo warp check: gone lanes per warp, sightings per line, the first sighting\n"
      ".visible .global .align 4 .u32 {}[{}];\n"
      ".visible .global .align 4 .u32 {}[{}];\n"
      ".visible .global .align 4 .u32 {}[{}];\n",
      kWarpGoneSymbol, kWarpSlots, kWarpMaskLinesSymbol, kBarrierLineSlots, kWarpMaskRecordSymbol,
      2 * static_cast<unsigned>(kRecordFields));
}

}  // namespace

std::optional<WarpInstrumentation> instrument_ptx_warp_collectives(std::string_view ptx, int learner_file) {
  WarpInstrumentation result;
  std::ostringstream out;
  std::istringstream in{std::string(ptx)};
  std::string line;
  bool declared = false;
  bool in_entry = false;
  int stay_labels = 0;
  PtxLineTracker lines(learner_file);
  std::smatch match;
  while (std::getline(in, line)) {
    lines.see(line);
    const bool searched = line.size() <= kLongestSearchedLine;
    if (searched && line.find(".entry") != std::string::npos) in_entry = true;
    if (searched && line.find(".func") != std::string::npos) in_entry = false;
    if (searched && std::regex_search(line, match, kCollective)) {
      ++result.collectives;
      const std::string guard = match[1].matched ? match[3].str() : "";
      const std::string opcode = match[4].str();
      const std::vector<std::string> operands = operands_of(match[6].str());
      std::optional<ShuffleOperands> shuffle;
      if (opcode.starts_with("shfl.sync.") && operands.size() == 5) {
        const std::string mode = opcode.substr(10, opcode.find('.', 10) - 10);
        shuffle =
            ShuffleOperands{operands[0].substr(0, operands[0].find('|')), mode, operands[2], operands[3]};
      }
      out << checked_collective(line, operands.back(), guard, match[2].length() > 0, kind_of(match[5].str()),
                                lines.current(), shuffle);
      continue;
    }
    if (searched && std::regex_search(line, match, kLeave) && (match[4].str() == "exit" || in_entry)) {
      if (match[1].matched) {
        // A guarded leave: mark the lane only where the guard lets it leave.
        out << only_where_guard_holds(match[3].str(), match[2].length() > 0, leaving_block(),
                                      fmt::format("$cudojo_warp_stay_{}", stay_labels++));
      } else {
        out << leaving_block();
      }
    }
    out << line << '\n';
    if (!declared && searched && std::regex_search(line, kAddressSize)) {
      out << declarations();
      declared = true;
    }
  }
  if (!declared) return std::nullopt;
  result.ptx = out.str();
  return result;
}

}  // namespace cudojo
