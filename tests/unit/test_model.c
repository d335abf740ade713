#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "model.h"
static void t(void **state) { (void)state;
 struct scenario sc; scenario_lesson_example(&sc); struct terms tm; assert_int_equal(model_eval(&sc,&tm),0);
 printf("psi %llu peak %llu states %llu act %llu logits %llu maxb %llu kbest %llu\n",(unsigned long long)tm.params,(unsigned long long)tm.peak_bytes,(unsigned long long)tm.states_bytes,(unsigned long long)tm.act_bytes,(unsigned long long)tm.logits_bytes,(unsigned long long)tm.max_micro_batch,(unsigned long long)tm.k_best);
}
int main(void){ const struct CMUnitTest tests[]={cmocka_unit_test(t)}; return cmocka_run_group_tests(tests,NULL,NULL);}
