// The optim layer in one include.
#pragma once

#include "optim/averaging.h"
#include "optim/checkpoint.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
