package io.github.hedge.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.hedge.spring.annotation.Hedged;
import io.github.hedge.spring.aop.UnhedgeableMethodException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** A real {@code SpringApplication} start, to see the report a user sees. */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureReportTest {

    @Test
    void should_print_the_property_range_and_value_when_the_application_fails_to_start(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties("hedge.instances.user-reads.max-extra-load=1.5", "spring.main.banner-mode=off")
                        .run())
                .hasRootCauseInstanceOf(InvalidHedgePropertyException.class);
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("Invalid hedge configuration: hedge.instances.user-reads.max-extra-load must be in (0, 1),"
                        + " was 1.5.")
                .contains("Update 'hedge.instances.user-reads.max-extra-load' so that it is in (0, 1)");
    }

    @Test
    void should_print_the_unknown_key_and_the_nearest_valid_one_when_a_hedge_key_is_misspelt(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .properties("hedge.instances.users.max-extra-lod=0.5", "spring.main.banner-mode=off")
                        .run())
                .isNotNull();
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("Unknown property 'hedge.instances.users.max-extra-lod'")
                .contains("did you mean 'hedge.instances.users.max-extra-load'?")
                .contains("Correct or remove the misspelt hedge.* key");
    }

    @Test
    void should_print_the_bean_and_method_when_a_hedged_method_is_final(CapturedOutput output) {
        assertThatThrownBy(() -> new SpringApplicationBuilder(App.class, FinalBean.class)
                        .web(WebApplicationType.NONE)
                        .properties("spring.main.banner-mode=off")
                        .run())
                .hasRootCauseInstanceOf(UnhedgeableMethodException.class);
        assertThat(output)
                .contains("APPLICATION FAILED TO START")
                .contains("@Hedged method " + FinalRead.class.getName() + ".read() of bean 'finalRead' cannot be"
                        + " hedged: it is final")
                .contains("Change the method of bean 'finalRead'");
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({AopAutoConfiguration.class, HedgeAutoConfiguration.class})
    static class App {}

    @Configuration(proxyBeanMethods = false)
    static class FinalBean {
        @Bean
        FinalRead finalRead() {
            return new FinalRead();
        }
    }

    public static class FinalRead {
        @Hedged("reads")
        public final String read() {
            return "unhedged";
        }
    }
}
