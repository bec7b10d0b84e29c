#define BOOST_TEST_MODULE minigrad nn
#include <boost/test/unit_test.hpp>
