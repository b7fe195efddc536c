// SPDX-License-Identifier: Apache-2.0
// lantern.hpp - everything an application needs from the scheduler core.
#pragma once

#include "lantern/io.hpp"
#include "lantern/join.hpp"
#include "lantern/label.hpp"
#include "lantern/observer.hpp"
#include "lantern/options.hpp"
#include "lantern/scheduler.hpp"
#include "lantern/task_group.hpp"
#include "lantern/topology.hpp"
