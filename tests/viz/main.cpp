#define BOOST_TEST_MODULE minigrad viz
#include <boost/test/unit_test.hpp>
