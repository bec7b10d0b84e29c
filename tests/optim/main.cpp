#define BOOST_TEST_MODULE minigrad optim
#include <boost/test/unit_test.hpp>
