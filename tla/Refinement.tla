------------------------------ MODULE Refinement ------------------------------
(***************************************************************************)
(* ResumePlane refines ResumeContract.  The refinement mapping reads the   *)
(* abstract state off the concrete one: the durable frontier is the count  *)
(* of completed tasks, the effect oracle is the fired count, the durable   *)
(* log the durable records, the value consumed the answer, and each resume *)
(* at the interrupt checkpoint is seen as the caller sees it (value,       *)
(* intent, outcome).  Every concrete step must be an abstract step or      *)
(* leave the mapped state unchanged (crash, recovery, interrupt, stray).   *)
(*                                                                         *)
(* With every fault switch FALSE, TLC checks Abs!Spec and Abs!Completes as *)
(* temporal properties of Spec.  Each fault switch breaks the refinement   *)
(* (a duplicate effect, a wrong outcome, an invalid record ... is no       *)
(* abstract step).                                                         *)
(***************************************************************************)
EXTENDS ResumePlane

Abs == INSTANCE ResumeContract WITH
           done    <- frontier,
           fired   <- effects,
           durable <- log,
           answer  <- consumed,
           answers <- [i \in DOMAIN resumes |->
                          [v |-> resumes[i].v, intent |-> resumes[i].intent,
                           out |-> resumes[i].out, branch |-> resumes[i].branch]]

AbsSpec == Abs!Spec
AbsCompletes == Abs!Completes
=============================================================================
