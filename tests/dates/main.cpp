#define BOOST_TEST_MODULE minigrad dates
#include <boost/test/unit_test.hpp>
