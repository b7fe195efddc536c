// SPDX-License-Identifier: Apache-2.0
// strategy.cpp - the protocol tests' one instantiation: every TEST_P(Strategy, ...) of
// core_protocol_tests runs under condvar and io_uring (strategy.hpp).
#include "strategy.hpp"

namespace {

std::string strategy_name(const ::testing::TestParamInfo<lantern::SleepStrategy>& info) {
  return lantern::strategy_name(info.param);
}

}  // namespace

using lantern::testing::Strategy;

INSTANTIATE_TEST_SUITE_P(Strategies, Strategy,
                         ::testing::Values(lantern::SleepStrategy::condvar, lantern::SleepStrategy::io_uring),
                         strategy_name);
