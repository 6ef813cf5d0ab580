/**
 * Placement of hedged HTTP attempts on the instances Spring Cloud LoadBalancer knows: {@link
 * io.github.hedge.http.loadbalancer.LoadBalancerInstanceChooser}. Needs spring-cloud-loadbalancer on
 * the class path; nothing else in hedge-http does.
 */
package io.github.hedge.http.loadbalancer;
