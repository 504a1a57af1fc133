#include "compile/ptx_barriers.h"

#include <fmt/format.h>

#include <regex>
#include <sstream>

#include "compile/check_build.h"
#include "compile/ptx_lines.h"

namespace cudojo {

namespace {

// A block-wide barrier, optionally predicated: `@%p bar.sync 0;`, `barrier.sync.aligned 0;`,
// `bar.red.popc.u32 %r1, 0, %p1;`. Warp barriers (bar.warp.sync) and arrive-only barriers are not
// waits of the whole block and are left alone.
const std::regex kBarrier(R"(^(\s*)(@(!?)(%[\w$]+)\s+)?(bar|barrier)(\.sync|\.red)\b)");
const std::regex kAddressSize(R"(^\s*\.address_size\s+64\b)");
// Instructions and directives are short (see compile/ptx_lines.cc).
constexpr std::size_t kLongestSearchedLine = 1024;

std::string counting_block(unsigned line) {
  const unsigned line_slot = line < kBarrierLineSlots ? line : 0u;
  return fmt::format(
      R"(	{{ // cudojo barrier check: this thread passed a barrier at line {line}
	.reg .pred %cjp;
	.reg .b32 %cjr<6>;
	.reg .b64 %cjd<5>;
	mov.u32 %cjr0, %ctaid.z;
	mov.u32 %cjr1, %nctaid.y;
	mov.u32 %cjr2, %ctaid.y;
	cvt.u64.u32 %cjd0, %cjr2;
	mad.wide.u32 %cjd0, %cjr0, %cjr1, %cjd0;
	mov.u32 %cjr0, %nctaid.x;
	cvt.u64.u32 %cjd1, %cjr0;
	mov.u32 %cjr2, %ctaid.x;
	cvt.u64.u32 %cjd2, %cjr2;
	mad.lo.u64 %cjd0, %cjd0, %cjd1, %cjd2;
	mov.u32 %cjr0, %ntid.x;
	mov.u32 %cjr1, %ntid.y;
	mov.u32 %cjr2, %ntid.z;
	mul.lo.u32 %cjr3, %cjr0, %cjr1;
	mul.lo.u32 %cjr3, %cjr3, %cjr2;
	mov.u32 %cjr4, %tid.z;
	mov.u32 %cjr5, %tid.y;
	mad.lo.u32 %cjr4, %cjr4, %cjr1, %cjr5;
	mov.u32 %cjr5, %tid.x;
	mad.lo.u32 %cjr4, %cjr4, %cjr0, %cjr5;
	cvt.u64.u32 %cjd2, %cjr4;
	cvt.u64.u32 %cjd1, %cjr3;
	mad.lo.u64 %cjd0, %cjd0, %cjd1, %cjd2;
	setp.lt.u64 %cjp, %cjd0, {thread_slots};
	mov.u64 %cjd3, {passes};
	shl.b64 %cjd4, %cjd0, 2;
	add.u64 %cjd4, %cjd3, %cjd4;
	@%cjp red.global.add.u32 [%cjd4], 1;
	mov.u64 %cjd3, {lines};
	red.global.add.u32 [%cjd3+{line_offset}], 1;
	mov.u64 %cjd3, {shape};
	st.global.u32 [%cjd3], %cjr3;
	mov.u32 %cjr0, %nctaid.x;
	mov.u32 %cjr1, %nctaid.y;
	mul.lo.u32 %cjr0, %cjr0, %cjr1;
	mov.u32 %cjr1, %nctaid.z;
	mul.lo.u32 %cjr0, %cjr0, %cjr1;
	st.global.u32 [%cjd3+4], %cjr0;
	}}
)",
      fmt::arg("line", line), fmt::arg("thread_slots", kBarrierThreadSlots),
      fmt::arg("passes", kBarrierPassesSymbol), fmt::arg("lines", kBarrierLinesSymbol),
      fmt::arg("shape", kBarrierShapeSymbol), fmt::arg("line_offset", line_slot * 4));
}

std::string counter_declarations() {
  return fmt::format(
      "\n// cudojo barrier check: per-thread passes, per-line arrivals, launch shape\n"
      ".visible .global .align 4 .u32 {}[{}];\n"
      ".visible .global .align 4 .u32 {}[{}];\n"
      ".visible .global .align 4 .u32 {}[2];\n",
      kBarrierPassesSymbol, kBarrierThreadSlots, kBarrierLinesSymbol, kBarrierLineSlots, kBarrierShapeSymbol);
}

}  // namespace

std::optional<PtxInstrumentation> instrument_ptx_barriers(std::string_view ptx, int source_file_index) {
  PtxInstrumentation result;
  std::ostringstream out;
  std::istringstream in{std::string(ptx)};
  std::string line;
  bool declared = false;
  PtxLineTracker lines(source_file_index);
  int label = 0;
  std::smatch match;
  while (std::getline(in, line)) {
    lines.see(line);
    const unsigned current_line = lines.current();
    // std::regex recurses per character: a line of hundreds of thousands of blanks (inline asm can
    // make one) would overflow the stack. Such a line is not given to it; one that may hold a
    // barrier cannot be counted, so the module gets no check build.
    if (line.size() > kLongestSearchedLine) {
      for (const char* barrier : {"bar.sync", "bar.red", "barrier.sync", "barrier.red"}) {
        if (line.find(barrier) != std::string::npos) return std::nullopt;
      }
      out << line << '\n';
      continue;
    }
    if (std::regex_search(line, match, kBarrier)) {
      ++result.barriers;
      if (match[2].matched) {
        // A predicated barrier: count only where it runs. Jump over the count when it does not.
        out << only_where_guard_holds(match[4].str(), match[3].length() > 0, counting_block(current_line),
                                      fmt::format("$cudojo_barrier_skip_{}", label++));
      } else {
        out << counting_block(current_line);
      }
    }
    out << line << '\n';
    if (!declared && std::regex_search(line, kAddressSize)) {
      out << counter_declarations();
      declared = true;
    }
  }
  if (!declared) return std::nullopt;
  result.ptx = out.str();
  return result;
}

}  // namespace cudojo
