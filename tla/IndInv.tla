------------------------------- MODULE IndInv -------------------------------
(***************************************************************************)
(* An inductive invariant for the reference semantics (all six fault       *)
(* switches FALSE):                                                        *)
(*   Init => Inv            (run Spec with INVARIANT Inv),                 *)
(*   Inv /\ Next => Inv'    (run IndInit /\ [][Next]_vars: every Inv state *)
(*                           is an initial state, so TLC checks every      *)
(*                           successor of every Inv state, depth 1),       *)
(*   Inv => the contract    (the same run checks PC EO FD CV CO RD TypeOK  *)
(*                           on every initial state).                      *)
(***************************************************************************)
EXTENDS ResumePlane

Prefix(k) == [i \in 1..k |-> [idx |-> i, valid |-> TRUE]]

\* Finite sequences of fork resumes that observed f of their own value.
ForkSeqs == UNION {{[i \in 1..k |-> [v |-> s[i], out |-> Out(s[i])]] :
                     s \in [1..k -> Values]} : k \in 0..(MaxResumes - 1)}

Inv ==
    /\ TypeOK
    /\ frontier \in 0..N
    /\ pc = frontier + 1                       \* never behind, never ahead
    /\ log = Prefix(frontier)                  \* each task logged once, valid
    /\ effects = [t \in 1..N |-> IF t <= frontier THEN 1 ELSE 0]
    /\ ~reentered
    /\ pending => pc = IP
    /\ (consumed # None) <=> (frontier >= IP)
    /\ (resumes = <<>>) <=> (consumed = None)
    /\ resumes # <<>> => /\ resumes[1] = [v |-> consumed, out |-> Out(consumed)]
                         /\ Tail(resumes) \in ForkSeqs
    /\ \A r \in recHist : r.f <= frontier /\ r.d = <<r.f + 1, FALSE>>
    /\ Cardinality(recHist) <= crashes
    /\ strays > 0 => pc = Done

\* Every Inv state, enumerated directly (TLC cannot enumerate Seq(...)).
IndInit ==
    /\ frontier \in 0..N
    /\ pc = frontier + 1
    /\ log = Prefix(frontier)
    /\ effects = [t \in 1..N |-> IF t <= frontier THEN 1 ELSE 0]
    /\ reentered = FALSE
    /\ pending \in (IF pc = IP THEN BOOLEAN ELSE {FALSE})
    /\ consumed \in (IF frontier >= IP THEN Values ELSE {None})
    /\ resumes \in (IF consumed = None THEN {<<>>}
                    ELSE {<<[v |-> consumed, out |-> Out(consumed)]>> \o s : s \in ForkSeqs})
    /\ crashes \in 0..MaxCrashes
    /\ recHist \in {S \in SUBSET {[f |-> k, d |-> <<k + 1, FALSE>>] : k \in 0..frontier} :
                      Cardinality(S) <= crashes}
    /\ strays \in (IF pc = Done THEN 0..MaxStrays ELSE {0})
    /\ Inv

IndSpec == IndInit /\ [][Next]_vars
=============================================================================
