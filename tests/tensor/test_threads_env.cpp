// Run by CTest with MINIGRAD_NUM_THREADS=1 in the environment: the setting reaches OpenMP and OpenBLAS.
#define BOOST_TEST_MODULE minigrad threads environment
#include <boost/test/unit_test.hpp>

#include <cblas.h>
#include <omp.h>

#include "tensor/threads.h"

BOOST_AUTO_TEST_CASE(environment_variable_sets_both_thread_pools) {
  BOOST_TEST(minigrad::num_threads() == 1);
  BOOST_TEST(omp_get_max_threads() == 1);
  BOOST_TEST(openblas_get_num_threads() == 1);
}
