-------------------------------- MODULE Intent --------------------------------
(***************************************************************************)
(* Proposition 1 (CONTRACT.md section 2), mechanised at small bounds.      *)
(*                                                                         *)
(* An interrupt has been answered with a value a (the gated task ran once, *)
(* the first outcome is f(a)).  A second resume with value w then arrives  *)
(* at the same checkpoint.  The caller means a FORK (any w: a new branch   *)
(* observing f(w)) or a RETRY (a re-delivery of the answer, so w = a: the  *)
(* first outcome stands and the gated task does not run again).            *)
(*                                                                         *)
(* A responder is deterministic: a function from what it can see to a      *)
(* decision.  It sees the durable state (a) and the wire: w, and the       *)
(* intent only if Discriminator.  TLC ranges over EVERY such function: the *)
(* responder is chosen in the initial state (one initial state per         *)
(* responder).  Each behaviour then runs the protocol once per admissible  *)
(* (a, w, intent) -- every execution the responder can face, each from the *)
(* same durable state -- and records the ones it gets wrong in failed.     *)
(*                                                                         *)
(* Invariant NoneConforms: once every execution is tried, failed # {}.     *)
(*   Discriminator = FALSE: holds -- every responder fails some execution  *)
(*                   (Proposition 1: FD for forks and CO for retries       *)
(*                   cannot both hold).                                    *)
(*   Discriminator = TRUE : violated -- TLC's counterexample is a          *)
(*                   responder that conforms on every execution.           *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS NV, Discriminator

ASSUME NV \in Nat /\ NV >= 1 /\ Discriminator \in BOOLEAN

Values == 1..NV
None == 0
Out(v) == v + NV                  \* f: injective, never the identity

\* What a caller may send after answering a: <<a, w, intent>>.
Admissible == {m \in Values \X Values \X {"fork", "retry"} : m[3] = "retry" => m[2] = m[1]}
\* What the responder sees of it: the durable state and the wire.
View(m) == IF Discriminator THEN m ELSE <<m[1], m[2], "none">>
Views == {View(m) : m \in Admissible}

\* branch : open a new branch, run the gated task there with w
\* dedupe : serve the recorded first outcome, run nothing
\* reexec : run the gated task again on the primary run with w
\* refuse : answer nothing
Decisions == {"branch", "dedupe", "reexec", "refuse"}

\* One execution: answer a, then the second resume; what the caller observes.
Run(d, m) == [branches  |-> IF d = "branch" THEN 1 ELSE 0,
              gateRuns  |-> IF d = "reexec" THEN 2 ELSE 1,
              outcome   |-> CASE d \in {"branch", "reexec"} -> Out(m[2])
                              [] d = "dedupe" -> Out(m[1])
                              [] d = "refuse" -> None]

\* FD for a FORK: a new branch observing f(w), the primary run untouched.
FDfork(m, r) == m[3] = "fork" => (r.branches = 1 /\ r.outcome = Out(m[2]) /\ r.gateRuns = 1)
\* CO for a RETRY: the gated task does not run again (on the primary run or
\* a new branch) and the first outcome stands.
COretry(m, r) == m[3] = "retry" => (r.branches = 0 /\ r.gateRuns = 1 /\ r.outcome = Out(m[1]))

VARIABLES
    resp,    \* the responder: [Views -> Decisions], fixed for the behaviour
    todo,    \* executions not tried yet
    last,    \* the last execution tried and what it observed
    failed   \* executions on which FDfork or COretry failed

vars == <<resp, todo, last, failed>>

Init ==
    /\ resp \in [Views -> Decisions]
    /\ todo = Admissible
    /\ last = <<>>
    /\ failed = {}

\* Try the next execution (a fixed order: the result does not depend on it).
Try ==
    /\ todo # {}
    /\ LET m == CHOOSE x \in todo : TRUE
           r == Run(resp[View(m)], m)
       IN  /\ todo' = todo \ {m}
           /\ last' = <<m, r>>
           /\ failed' = IF FDfork(m, r) /\ COretry(m, r) THEN failed ELSE failed \cup {m}
    /\ UNCHANGED resp

Tried == todo = {} /\ UNCHANGED vars

Next == Try \/ Tried

Spec == Init /\ [][Next]_vars

TypeOK == /\ resp \in [Views -> Decisions]
          /\ todo \subseteq Admissible /\ failed \subseteq Admissible

\* Every responder gets some execution wrong.
NoneConforms == todo = {} => failed # {}
=============================================================================
