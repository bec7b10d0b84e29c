#define BOOST_TEST_MODULE minigrad autograd
#include <boost/test/unit_test.hpp>
