#define BOOST_TEST_MODULE minigrad lm
#include <boost/test/unit_test.hpp>
