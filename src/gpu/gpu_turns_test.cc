#include "gpu/gpu_turns.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace cudojo {
namespace {

// What the worker told its parent, in order.
class Recorded {
 public:
  Recorded() {
    gpu_turns::Channel channel;
    channel.share = [this] { said.push_back("shared"); };
    channel.alone = [this] { said.push_back("alone"); };
    channel.release = [this] { said.push_back("none"); };
    gpu_turns::open(channel);
  }
  ~Recorded() { gpu_turns::close(); }
  std::vector<std::string> said;
};

using Said = std::vector<std::string>;

TEST(GpuTurns, WorkIsSharedUntilItDrainsAndHostWorkHoldsNothing) {
  Recorded parent;
  gpu_turns::enqueue();  // an upload
  gpu_turns::enqueue();  // a launch after it: the turn is already held
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kShared);
  gpu_turns::drained();
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kNothing);  // the host checks now, holding nothing
  gpu_turns::enqueue();
  gpu_turns::drained();
  EXPECT_EQ(parent.said, (Said{"shared", "none", "shared", "none"}));
}

TEST(GpuTurns, ASynchronousCallWithWorkQueuedKeepsTheTurn) {
  Recorded parent;
  gpu_turns::enqueue();
  gpu_turns::brief_begin();  // an allocation while a copy is queued
  gpu_turns::brief_end();
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kShared);
  gpu_turns::drained();
  gpu_turns::brief_begin();  // an allocation on an idle GPU: held during it only
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kShared);
  gpu_turns::brief_end();
  EXPECT_EQ(parent.said, (Said{"shared", "none", "shared", "none"}));
}

TEST(GpuTurns, APlantingHasTheGpuAloneUntilTheLearnersLaunchHasDrained) {
  Recorded parent;
  gpu_turns::pin_planting();
  gpu_turns::enqueue();  // the poisoning kernel
  gpu_turns::drained();  // synchronized after it: still alone
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kAlone);
  gpu_turns::pin_noise();  // the judge's noise beside the launch
  gpu_turns::enqueue();    // the learner's launch
  gpu_turns::unpin_planting();
  gpu_turns::drained();  // the main stream is done, the noise stream perhaps not
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kAlone);
  gpu_turns::unpin_noise();
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kNothing);
  EXPECT_EQ(parent.said, (Said{"alone", "none"}));
}

TEST(GpuTurns, APlantingAfterSharedWorkGivesTheSharedTurnBackBeforeAskingToBeAlone) {
  Recorded parent;
  gpu_turns::brief_begin();
  gpu_turns::brief_end();
  gpu_turns::enqueue();
  gpu_turns::drained();
  parent.said.clear();
  gpu_turns::brief_begin();  // held shared, nothing queued, a load under way
  EXPECT_THROW(gpu_turns::pin_planting(), std::logic_error);
  gpu_turns::brief_end();
  gpu_turns::enqueue();
  EXPECT_THROW(gpu_turns::pin_planting(), std::logic_error);  // queued work would run unheld
  gpu_turns::drained();
  parent.said.clear();
  gpu_turns::enqueue();
  gpu_turns::drained();
  gpu_turns::enqueue();
  gpu_turns::drained();  // GpuSession::poison_shared drains its stream first
  gpu_turns::pin_planting();
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kAlone);
  EXPECT_EQ(parent.said, (Said{"shared", "none", "shared", "none", "alone"}));
}

TEST(GpuTurns, ASpanOfPlantingsAsksForTheGpuAloneOnceAndKeepsItBetweenThem) {
  Recorded parent;
  gpu_turns::enqueue();  // the case's upload, shared
  gpu_turns::drained();
  gpu_turns::pin_span();
  for (int launch = 0; launch < 3; ++launch) {
    gpu_turns::pin_planting();
    gpu_turns::enqueue();  // the poisoning kernel
    gpu_turns::drained();
    gpu_turns::enqueue();  // the learner's launch
    gpu_turns::drained();
    gpu_turns::unpin_planting();
    // The comparison of its answer, on the host: still alone, since the span goes on.
    EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kAlone);
  }
  gpu_turns::enqueue();  // the guard values written between launches: held already
  gpu_turns::drained();
  gpu_turns::unpin_span();
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kNothing);
  EXPECT_EQ(parent.said, (Said{"shared", "none", "alone", "none"}));
}

TEST(GpuTurns, ASpanMustBeginWithNothingQueued) {
  Recorded parent;
  gpu_turns::enqueue();
  EXPECT_THROW(gpu_turns::pin_span(), std::logic_error);
}

TEST(GpuTurns, MeasuringAsksForNothingMore) {
  Recorded parent;
  gpu_turns::give_back();
  gpu_turns::measuring();
  gpu_turns::enqueue();
  gpu_turns::drained();
  gpu_turns::pin_planting();
  gpu_turns::unpin_planting();
  EXPECT_EQ(gpu_turns::held(), gpu_turns::Held::kMeasuring);
  EXPECT_TRUE(parent.said.empty());
}

TEST(GpuTurns, AfterTheJobIsClosedNothingIsAsked) {
  Recorded parent;
  gpu_turns::close();
  gpu_turns::enqueue();
  gpu_turns::pin_planting();
  gpu_turns::drained();
  gpu_turns::brief_begin();
  gpu_turns::brief_end();
  EXPECT_TRUE(parent.said.empty());
}

TEST(GpuTurns, TheResultLeavesTheWorkerHoldingATurnForWhatFollowsIt) {
  {
    Recorded parent;  // nothing held at the result: a shared turn is asked for first
    gpu_turns::hold_and_close();
    EXPECT_EQ(parent.said, (Said{"shared"}));
    gpu_turns::enqueue();  // freeing the job's buffers, settling: nothing more is asked
    EXPECT_EQ(parent.said, (Said{"shared"}));
  }
  {
    Recorded parent;  // a launch that faulted: its turn is still held, and kept
    gpu_turns::enqueue();
    gpu_turns::hold_and_close();
    EXPECT_EQ(parent.said, (Said{"shared"}));
  }
}

}  // namespace
}  // namespace cudojo
