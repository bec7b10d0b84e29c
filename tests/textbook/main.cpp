#define BOOST_TEST_MODULE minigrad textbook
#include <boost/test/unit_test.hpp>
