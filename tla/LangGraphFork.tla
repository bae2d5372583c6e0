---------------------------- MODULE LangGraphFork ----------------------------
(***************************************************************************)
(* How LangGraph 1.x serves a resume at an interrupt checkpoint (#6663).   *)
(* A resume to the checkpoint stores its value as a pending write and      *)
(* re-runs the gated node; interrupt() inside the node returns the value   *)
(* recorded under the write's key, if there is one.                        *)
(*                                                                         *)
(*  KeyByFork = FALSE  "as implemented": writes keyed by (checkpoint,      *)
(*                     task), so a second resume (a fork with another      *)
(*                     value) reads the FIRST value back -> FD violated.   *)
(*  KeyByFork = TRUE   "fork-keyed": writes keyed by (checkpoint, task,    *)
(*                     fork), so each fork reads its own value; replaying  *)
(*                     a branch still reads its recorded value.            *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANTS NV, MaxResumes, MaxReplays, KeyByFork

ASSUME NV \in Nat /\ NV >= 2 /\ MaxResumes \in Nat /\ MaxReplays \in Nat
ASSUME KeyByFork \in BOOLEAN

Values == 1..NV
Out(v) == v + NV                  \* the node's outcome f(v): injective, not id
CP == 1                           \* the interrupt checkpoint
Gate == 1                         \* the gated task

Key(b) == IF KeyByFork THEN <<CP, Gate, b>> ELSE <<CP, Gate>>

VARIABLES
    writes,    \* the saver's pending writes: a set of <<key, value>>
    branches,  \* resumes at CP in order: [v |-> value sent, out |-> outcome]
    replays    \* re-runs of an existing branch: [b |-> branch, out |-> outcome]

vars == <<writes, branches, replays>>

Recorded(k) == \E w \in writes : w[1] = k
Lookup(k) == (CHOOSE w \in writes : w[1] = k)[2]

Init == writes = {} /\ branches = <<>> /\ replays = <<>>

\* A resume with value v addressed to CP: becomes branch b.
Resume(v) ==
    /\ Len(branches) < MaxResumes
    /\ LET b   == Len(branches) + 1
           k   == Key(b)
           got == IF Recorded(k) THEN Lookup(k) ELSE v
       IN  /\ writes' = IF Recorded(k) THEN writes ELSE writes \cup {<<k, v>>}
           /\ branches' = Append(branches, [v |-> v, out |-> Out(got)])
    /\ UNCHANGED replays

\* Re-running an existing branch (e.g. recovery): interrupt() reads the record.
ReplayBranch(b) ==
    /\ Len(replays) < MaxReplays
    /\ replays' = Append(replays, [b |-> b, out |-> Out(Lookup(Key(b)))])
    /\ UNCHANGED <<writes, branches>>

Idle == UNCHANGED vars

Next == \/ \E v \in Values : Resume(v)
        \/ \E b \in DOMAIN branches : ReplayBranch(b)
        \/ Idle

Spec == Init /\ [][Next]_vars

TypeOK ==
    /\ branches \in Seq([v : Values, out : Nat])
    /\ replays \in Seq([b : Nat, out : Nat])

\* FD: every resume observes f of its own value.
FD == \A b \in DOMAIN branches : branches[b].out = Out(branches[b].v)

\* Replay idempotence: re-running a branch gives the outcome it had.
ReplayIdempotent == \A i \in DOMAIN replays :
                        replays[i].out = branches[replays[i].b].out
=============================================================================
