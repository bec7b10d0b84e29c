// The optim layer in one include.
#pragma once

#include "minigrad/optim/averaging.h"
#include "minigrad/optim/checkpoint.h"
#include "minigrad/optim/optimizer.h"
#include "minigrad/optim/schedule.h"
