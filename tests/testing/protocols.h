#ifndef STRAND_TESTS_TESTING_PROTOCOLS_H_
#define STRAND_TESTS_TESTING_PROTOCOLS_H_

// The coherence protocols every suite above cc/ runs against, listed in
// this one place: add a protocol here and every storage/ and index/ suite
// runs on it too.
//
//   INSTANTIATE_TEST_SUITE_P(Protocols, MyTest,
//                            ::testing::ValuesIn(testing::TestProtocols()),
//                            testing::ProtocolTestName);

#include <string>
#include <vector>

#include "cc/options.h"
#include "gtest/gtest.h"

namespace strand::testing {

inline std::vector<cc::Protocol> TestProtocols() {
  return {cc::Protocol::kSel, cc::Protocol::kSelcc};
}

inline std::string ProtocolTestName(
    const ::testing::TestParamInfo<cc::Protocol>& info) {
  return cc::ProtocolName(info.param);
}

}  // namespace strand::testing

#endif  // STRAND_TESTS_TESTING_PROTOCOLS_H_
