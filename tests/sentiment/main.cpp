#define BOOST_TEST_MODULE minigrad sentiment
#include <boost/test/unit_test.hpp>
