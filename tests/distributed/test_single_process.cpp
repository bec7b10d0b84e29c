// The distributed layer in a process started without an MPI launcher: a world of one, no MPI needed.
#define BOOST_TEST_MODULE minigrad distributed single process
#include "test_helpers.h"

using namespace minigrad;
using namespace minigrad::testing;

BOOST_AUTO_TEST_CASE(without_a_launcher_the_world_is_one_process) {
  expect_error<Error>([] { distributed::rank(); },
                      "distributed: there is no distributed::Context: create one (it initialises MPI) before "
                      "using the distributed layer");
  {
    distributed::Context context;
    BOOST_TEST(context.rank() == 0);
    BOOST_TEST(context.world_size() == 1);
    BOOST_TEST(!context.uses_mpi());
    BOOST_TEST(distributed::world_size() == 1);
    expect_error<Error>([] { distributed::Context another; },
                        "distributed::Context: a Context exists already in this process");
    // The collectives are the identity.
    Variable p(Tensor::from_values({1, 2}, {2}), true);
    p.set_grad(Tensor::from_values({3, 4}, {2}));
    distributed::average_gradients({p});
    expect_close(p.grad(), {3, 4});
    std::array<double, 2> counts = {5, 6};
    distributed::all_reduce_sum(counts);
    BOOST_TEST(counts[0] == 5);
  }
  expect_error_containing<Error>([] { distributed::world_size(); }, "there is no distributed::Context");
}
