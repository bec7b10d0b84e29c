#define BOOST_TEST_MODULE minigrad tensor
#include <boost/test/unit_test.hpp>
