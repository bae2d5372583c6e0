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

\* The answer at the interrupt checkpoint, a fork on its own branch with value
\* v, and a retry of the answer c: what the reference records for each.
Answer(c) == [v |-> c, intent |-> "answer", tag |-> "answer", out |-> Out(c), branch |-> FALSE]
ForkRec(v) == [v |-> v, intent |-> "fork", tag |-> "fork", out |-> Out(v), branch |-> TRUE]
RetryRec(c) == [v |-> c, intent |-> "retry", tag |-> "retry", out |-> Out(c), branch |-> FALSE]

\* Finite sequences of later resumes (forks observing f of their own value,
\* retries served the recorded outcome) after the answer c.
Later(c) == {ForkRec(v) : v \in Values} \cup {RetryRec(c)}
LaterSeqs(c) == UNION {[1..k -> Later(c)] : k \in 0..(MaxResumes - 1)}

\* The resume writes the reference holds: one per branch, keyed <<IP, b>>.
WritesOf(rs) == {<<<<IP, i>>, rs[i].v>> : i \in {j \in DOMAIN rs : j = 1 \/ rs[j].branch}}

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
    /\ pointer = frontier
    /\ resumes # <<>> => /\ resumes[1] = Answer(consumed)
                         /\ Tail(resumes) \in LaterSeqs(consumed)
    /\ writes = IF resumes = <<>> THEN {} ELSE WritesOf(resumes)
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
    /\ pointer = frontier
    /\ resumes \in (IF consumed = None THEN {<<>>}
                    ELSE {<<Answer(consumed)>> \o s : s \in LaterSeqs(consumed)})
    /\ writes = IF resumes = <<>> THEN {} ELSE WritesOf(resumes)
    /\ crashes \in 0..MaxCrashes
    /\ recHist \in {S \in SUBSET {[f |-> k, d |-> <<k + 1, FALSE>>] : k \in 0..frontier} :
                      Cardinality(S) <= crashes}
    /\ strays \in (IF pc = Done THEN 0..MaxStrays ELSE {0})
    /\ Inv

IndSpec == IndInit /\ [][Next]_vars
=============================================================================
