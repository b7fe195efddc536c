/* SPDX-License-Identifier: Apache-2.0 */
/* sleep.pml - a Promela model of Lantern's sleep protocol (README.md beside this file,
 * "The model"; the io_uring strategy: core/io/README.md).
 *
 * Checked property: no interleaving leaves work queued while every worker that could
 * run it is asleep. Formally: whenever the whole system is stuck (Promela's `timeout`:
 * no process can move - every worker blocked asleep, or held forever by a long task,
 * and the outside thread done), no job is queued in a lane or a deque.
 *
 * Build variants (tests/CMakeLists.txt runs them: spin_sleep_model_*):
 *   -DIO_URING      the io_uring strategy's sleep: the condvar protocol, with the wait
 *                   in the worker's ring, where its own IO completion can also end it
 *                   (it then withdraws under the slot mutex).
 *   -DBUG_SWALLOW   leave_for_latch left out: a worker that leaves its wait because
 *                   its latch was set - woken for work it has not searched for, or idle
 *                   and awake while a poster counted on it - returns to its task without
 *                   passing the wake on. Spin must find a counterexample.
 *   -DBUG_SLEEP_ON_DECLINED  a worker's last look before blocking leaves out the deque
 *                   its search left a lone job in (core/stealing/README.md, "A lone
 *                   task"). Spin must find the job stranded.
 *
 * What is modelled, step by step as the code does it (each Promela statement or atomic
 * block is one indivisible step of the real code: one atomic RMW, one load, or a
 * section under the slot mutex):
 *   - the counter word (jobs event counter, inactive, sleeping) updated as one word;
 *     the JEC wraps modulo 4 (the real one modulo 2^32) so wrap-around is exercised;
 *   - posting from a worker (own deque) and from outside (a lane), new_jobs' decision
 *     whom to wake, wake_any / wake_slot / wake_specific;
 *   - the idle rounds, getting sleepy (JEC flip), the last search, the latch claim
 *     UNSET -> SLEEPY -> SLEEPING, the JEC check with the sleeping CAS, the re-check of
 *     the lanes after registering, blocking, and leave_sleep;
 *   - latches: Latch::set's exchange and its targeted wake; the worker leaving its wait
 *     when its latch is set, and passing on a wake for work it did not search for;
 *   - io_uring: a sleeper's own IO completion ending its wait, and its withdrawal under
 *     the slot mutex (or, if a waker cleared its word first, the waker's wake).
 * What is abstracted (argued in prose in README.md): memory ordering (Promela is
 * sequentially consistent, so the fences' argument is assumed, not checked); the lanes
 * are one pool any worker searches; a search is three separate looks (own deque, lanes,
 * the other deque), so it can miss work posted behind it; jobs never spawn more jobs;
 * work_found's wake chain (it only adds wakes); IO completions beyond one per worker
 * (and the has_ready exit before blocking, which is the lane check's twin); two workers
 * and one outside thread.
 */

#define NW 2
#define UNSET 0
#define SLEEPY 1
#define SLEEPING 2
#define SET 3
#define WHY_WORK 0
#define WHY_LATCH 1

byte jec = 1;       /* odd: news since the last worker got sleepy */
byte inactive = 0;
byte sleeping = 0;
byte lane = 0;      /* jobs in the lanes */
byte dq[NW];        /* jobs in each worker's deque */
byte latch[NW];     /* the latch each worker waits on (worker 1: its terminate latch) */
bool blocked[NW];   /* condvar strategy: the slot's futex word, set/cleared under mtx */
byte why[NW];       /* condvar strategy: woken_why, written with blocked = false */
bool mtx[NW];       /* the slot mutex */
bool io_event[NW]; /* io_uring: an IO completion of the worker's own is yet to come */
bool withdrew[NW]; /* io_uring: the worker's last wait ended in its own withdrawal */
bool outside_done = false;

inline lock(m) { atomic { !m -> m = true } }
inline unlock(m) { m = false }

/* wake_slot (condvar strategy): under the slot mutex, clear the worker's futex word if
 * it is blocked (the futex wake itself, after the unlock, only ends the kernel wait). */
inline wake_slot(w, reason, res) {
  lock(mtx[w]);
  if
  :: blocked[w] -> why[w] = reason; blocked[w] = false; sleeping--; res = 1
  :: else -> res = 0
  fi;
  unlock(mtx[w])
}

/* wake_any(1): both strategies (wake_any starts at the lowest index; either order is
 * modelled). */
inline wake_one(res) {
  if
  :: wake_slot(0, WHY_WORK, res);
     if :: !res -> wake_slot(1, WHY_WORK, res) :: else fi
  :: wake_slot(1, WHY_WORK, res);
     if :: !res -> wake_slot(0, WHY_WORK, res) :: else fi
  fi
}

/* wake_specific: a latch's setter wakes the worker sleeping on it. */
inline wake_specific(w, res) {
  wake_slot(w, WHY_LATCH, res)
}

/* new_jobs(1, queue_was_empty): the JEC to odd, then wake the shortfall. */
inline new_jobs(was_empty, c_sleeping, c_awake, res) {
  atomic {
    if :: jec % 2 == 0 -> jec = (jec + 1) % 4 :: else fi;
    c_sleeping = sleeping;
    c_awake = inactive - sleeping
  };
  if
  :: c_sleeping == 0 -> skip
  :: c_sleeping > 0 && !was_empty -> wake_one(res)
  :: c_sleeping > 0 && was_empty && c_awake < 1 -> wake_one(res)
  :: c_sleeping > 0 && was_empty && c_awake >= 1 -> skip
  fi
}

/* find_work: own deque, the lanes, the other worker's deque - three separate looks.
 * A thief may leave a deque's only task to its owner (Worker::steal_from: it takes such
 * a task on its second sighting); here any search may decline it, every time. A search
 * that declined does not pay a wake's debt (owes), and the worker does not sleep while
 * that deque holds a job (try_sleep's last look). */
inline find_work(me, found, declined) {
  found = false;
  declined = false;
  atomic { if :: dq[me] > 0 -> dq[me]--; found = true :: else fi };
  if :: !found -> atomic { if :: lane > 0 -> lane--; found = true :: else fi } :: else fi;
  if
  :: !found ->
     atomic {
       if
       :: dq[1 - me] > 0 -> dq[1 - me]--; found = true
       :: dq[1 - me] == 1 -> declined = true
       :: else
       fi
     }
  :: else
  fi
}

/* leave_sleep's latch part: back to UNSET unless set meanwhile. */
inline latch_wake_up(me) {
  atomic { if :: latch[me] == SLEEPY || latch[me] == SLEEPING -> latch[me] = UNSET :: else fi }
}

/* Sleep::sleep / sleep_io: one attempt to fall asleep on latch[me]. Leaves `owes` set
 * when a waker took this worker out of the sleeping count for work. */
inline try_sleep(me, my_jec, owes, ok, res, declined) {
  lock(mtx[me]);
  atomic { if :: latch[me] == UNSET -> latch[me] = SLEEPY; ok = true :: else -> ok = false fi };
  if :: ok -> atomic { if :: latch[me] == SLEEPY -> latch[me] = SLEEPING :: else -> ok = false fi } :: else fi;
  if
  :: !ok -> latch_wake_up(me); unlock(mtx[me])
  :: ok ->
     atomic { if :: jec != my_jec -> ok = false :: else -> sleeping++ fi };
     if
     :: !ok -> latch_wake_up(me); unlock(mtx[me])
     :: ok ->
        /* SleepFence, then has_injected_work, and the deque the last search declined a
         * job in (Worker::declined_still_there). -DBUG_SLEEP_ON_DECLINED leaves that
         * deque out: spin must find the declined job stranded. */
        if
#ifdef BUG_SLEEP_ON_DECLINED
        :: lane > 0 -> sleeping--; latch_wake_up(me); unlock(mtx[me])
#else
        :: lane > 0 || (declined && dq[1 - me] > 0) -> sleeping--; latch_wake_up(me); unlock(mtx[me])
#endif
        :: else ->
           blocked[me] = true;
           unlock(mtx[me]);            /* then futex-wait on the word, without the mutex */
#ifdef IO_URING
           /* sleep_io: the wait is in the ring, where the worker's own IO completion can
            * also end it (once per worker here); it then withdraws under the mutex,
            * unless a waker cleared the word first. */
           withdrew[me] = false;
end_blocked_io:
           if
           :: !blocked[me] -> skip
           :: atomic { io_event[me] -> io_event[me] = false };
              lock(mtx[me]);
              if :: blocked[me] -> blocked[me] = false; sleeping--; withdrew[me] = true :: else fi;
              unlock(mtx[me])
           fi;
           if
           :: !withdrew[me] ->
              res = why[me];
              if :: res == WHY_WORK -> owes = true :: else fi
           :: else
           fi;
#else
end_blocked: (!blocked[me]);
           res = why[me];              /* written by the waker before it cleared the word */
           if :: res == WHY_WORK -> owes = true :: else fi;
#endif
           latch_wake_up(me)
        fi
     fi
  fi
}

/* Worker::wait_until_cold(latch[me]): run other work until the latch is set, sleeping
 * on it when there is none. */
inline wait_until(me, found, declined, my_jec, sleepy, owes, ok, res) {
  do
  :: latch[me] == SET -> break
  :: else ->
     find_work(me, found, declined);
     if
     :: found -> skip  /* execute it: jobs are short and spawn nothing */
     :: else ->
        inactive++;     /* start_looking */
        sleepy = false;
        owes = false;
        do
        :: latch[me] == SET -> break
        :: else ->
           find_work(me, found, declined);
           if :: !declined -> owes = false :: else fi;  /* searched since any wake for work */
           if
           :: found -> break
           :: else ->
              if
              :: !sleepy ->
                 if
                 :: skip  /* another fruitless idle round */
                 :: atomic { if :: jec % 2 == 1 -> jec = (jec + 1) % 4 :: else fi; my_jec = jec };
                    sleepy = true
                 fi
              :: sleepy ->
                 try_sleep(me, my_jec, owes, ok, res, declined);
                 sleepy = false
              fi
           fi
        od;
        inactive--;     /* work_found */
#ifndef BUG_SWALLOW
        /* Sleep::leave_for_latch: leaving the idle period because the latch was set,
         * not because work was found. A poster may have counted on this worker (woken
         * it for work, or skipped a wake because it was idle and awake): if it owes a
         * search or the lanes hold work, wake a sleeper in its place. */
        if
        :: !found ->
           atomic { res = sleeping };
           if :: res > 0 && (owes || lane > 0) -> wake_one(res) :: else fi
        :: else
        fi;
        owes = false
#endif
        skip
     fi
  od
}

/* Worker 0 runs task T1: it spawns D onto its own deque (sometimes), then waits on a
 * Signal (latch[0]). Once the latch is set, T1 runs for a long time: worker 0 is busy
 * for good, and any work still queued must be found by worker 1. */
proctype worker0() {
  bool found, declined, sleepy, owes, ok, was_empty;
  byte my_jec, res, c_sleeping, c_awake;
  if
  :: atomic { was_empty = (dq[0] == 0); dq[0]++ };
     new_jobs(was_empty, c_sleeping, c_awake, res)
  :: skip
  fi;
  wait_until(0, found, declined, my_jec, sleepy, owes, ok, res);
end_t1_forever: false
}

/* Worker 1: its main loop, waiting on its terminate latch (never set here). */
proctype worker1() {
  bool found, declined, sleepy, owes, ok;
  byte my_jec, res;
  wait_until(1, found, declined, my_jec, sleepy, owes, ok, res)
}

/* The outside thread: submits J into a lane (push, fence, new_jobs) and sets the
 * Signal T1 waits on (the latch's exchange, then a targeted wake), in either order. */
proctype outside() {
  bool was_empty;
  byte old, c_sleeping, c_awake, res;
  if
  :: atomic { was_empty = (lane == 0); lane++ };
     new_jobs(was_empty, c_sleeping, c_awake, res);
     atomic { old = latch[0]; latch[0] = SET };
     if :: old == SLEEPING -> wake_specific(0, res) :: else fi
  :: atomic { old = latch[0]; latch[0] = SET };
     if :: old == SLEEPING -> wake_specific(0, res) :: else fi;
     atomic { was_empty = (lane == 0); lane++ };
     new_jobs(was_empty, c_sleeping, c_awake, res)
  fi;
  outside_done = true
}

init {
  atomic {
#ifdef IO_URING
    io_event[0] = true;
    io_event[1] = true;
#endif
    run worker0();
    run worker1();
    run outside()
  }
}

/* When nothing can move any more, no work may be queued. */
active proctype monitor() {
  timeout -> assert(lane == 0 && dq[0] == 0 && dq[1] == 0)
}
